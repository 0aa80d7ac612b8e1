// SPDX-License-Identifier: GPL-2.0-only
// Lock statistics per lock instance (/proc/lock_stat) from the simulator's workloads.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::sim {
namespace {

const char* kLoop = R"(
[run]
duration_ms = 10
warmup_ms = 1
seed = 5
[machine]
sockets = 1
cores_per_socket = 4
threads_per_core = 1
[guest]
lock = "qspinlock"
[workload]
type = "lockloop"
compute_ns = 500
hold_ns = 1000
)";

nlohmann::ordered_json row(const nlohmann::ordered_json& j, const std::string& vm, std::size_t i) {
  return j.at("lockstat").at(vm).at(i);
}

TEST(LockStat, ContendedLockloopAccountsWaitAndHold) {
  const auto j = harness::run_to_json(scenario::parse_scenario(kLoop, "lockstat.toml", {}));
  ASSERT_EQ(j.at("lockstat").at("machine").size(), 1u);
  const auto r = row(j, "machine", 0);
  EXPECT_EQ(r.at("name"), "lockloop.lock");
  const auto acq = r.at("acquisitions").get<std::uint64_t>();
  // Every acquisition of the measured window is an op of the workload (give or take the
  // ones in flight at the window's edges).
  const auto ops = j.at("vms").at(0).at("ops").get<std::uint64_t>();
  EXPECT_NEAR(static_cast<double>(acq), static_cast<double>(ops), 4.0);
  // Four CPUs on one lock held 2/3 of each loop: most acquisitions had to wait.
  EXPECT_GT(r.at("contentions").get<std::uint64_t>(), acq / 2);
  EXPECT_GE(r.at("hold_min_ns").get<std::int64_t>(), 1000);
  EXPECT_GE(r.at("hold_avg_ns").get<double>(), 1000.0);
  EXPECT_LE(r.at("hold_max_ns").get<std::int64_t>(), 20000);
  EXPECT_GT(r.at("wait_total_ns").get<std::int64_t>(), 0);
  EXPECT_GE(r.at("wait_max_ns").get<std::int64_t>(), r.at("wait_min_ns").get<std::int64_t>());
  // Hold time can't exceed the window; total hold ~ acquisitions x hold.
  const double hold_total = static_cast<double>(r.at("hold_total_ns").get<std::int64_t>());
  EXPECT_LE(hold_total, static_cast<double>(j.at("measured_ns").get<std::int64_t>()));
}

TEST(LockStat, OneCpuNeverContends) {
  const auto j = harness::run_to_json(
      scenario::parse_scenario(kLoop, "lockstat.toml", {"machine.cores_per_socket=1"}));
  const auto r = row(j, "machine", 0);
  EXPECT_GT(r.at("acquisitions").get<std::uint64_t>(), 0u);
  EXPECT_EQ(r.at("contentions").get<std::uint64_t>(), 0u);
  EXPECT_EQ(r.at("wait_total_ns").get<std::int64_t>(), 0);
  EXPECT_EQ(r.at("acq_bounces").get<std::uint64_t>(), 0u);
}

TEST(LockStat, EbizzyNamesItsLocksAndMessagingEachPipe) {
  const char* ebizzy = R"(
[run]
duration_ms = 5
warmup_ms = 1
[machine]
sockets = 1
cores_per_socket = 4
[workload]
type = "ebizzy"
)";
  auto j = harness::run_to_json(scenario::parse_scenario(ebizzy, "e.toml", {}));
  EXPECT_EQ(row(j, "machine", 0).at("name"), "ebizzy.zone");
  EXPECT_EQ(row(j, "machine", 1).at("name"), "ebizzy.lru");
  EXPECT_GT(row(j, "machine", 1).at("acquisitions").get<std::uint64_t>(), 0u);
  const char* msg = R"(
[run]
duration_ms = 10
warmup_ms = 1
[machine]
sockets = 1
cores_per_socket = 4
[workload]
type = "messaging"
groups = 2
senders = 3
receivers = 3
)";
  j = harness::run_to_json(scenario::parse_scenario(msg, "m.toml", {}));
  // Each pipe mutex, followed by its wait_lock's own row.
  ASSERT_EQ(j.at("lockstat").at("machine").size(), 12u);
  EXPECT_EQ(row(j, "machine", 10).at("name"), "messaging.pipe_mutex[5]");
  EXPECT_GT(row(j, "machine", 10).at("acquisitions").get<std::uint64_t>(), 0u);
  EXPECT_EQ(row(j, "machine", 11).at("name"), "messaging.pipe_mutex[5].wait_lock");
}

}  // namespace
}  // namespace pvlock::sim
