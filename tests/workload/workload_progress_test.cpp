// SPDX-License-Identifier: GPL-2.0-only
// Every lock workload reports progress to the liveness watchdog (workload/lock_watch.hpp):
// ebizzy per lock section and per record, messaging per message sent or received. A halted waiter
// stranded by a lost kick with IRQs off (ebizzy's zone and lru locks are spin_lock_irqsave) is a
// hang the watchdog must name; an ordinary run is never flagged.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "sim/sim_helpers.hpp"

namespace pvlock::sim {
namespace {

// Four CPUs of bare metal running ebizzy on a pvqspinlock whose waiters queue and halt at
// once (no stealing, SPIN_THRESHOLD 1), with short records so the locks are contended.
scenario::Scenario ebizzy(double drop_kick, std::uint64_t seed = 1) {
  scenario::Scenario sc = testing::bare_metal(1, 4, "pvqspinlock", "ebizzy", 40, 0, seed);
  sc.vms.front().guest.policies.qspinlock.spin_threshold = 1;
  sc.vms.front().guest.policies.qspinlock.hybrid_stealing = false;
  testing::set_param(sc, "user_ns", testing::constant(2000));
  testing::set_param(sc, "faults", std::int64_t{16});
  testing::set_param(sc, "fault_ns", testing::constant(200));
  testing::set_param(sc, "lru_batch", std::int64_t{2});
  testing::set_param(sc, "zone_batch", std::int64_t{4});
  sc.faults.drop_kick = drop_kick;
  return sc;
}

TEST(WorkloadProgress, EbizzyLostKickIsReported) {
  // Rare enough that records complete first: a task is watched from its first report.
  const auto j = harness::run_to_json(ebizzy(0.02));
  ASSERT_TRUE(j.contains("liveness")) << j.dump(2);
  const auto& t = j["liveness"]["tasks"][0];
  EXPECT_NE(t["task"].get<std::string>().find("ebizzy/"), std::string::npos) << t.dump(2);
  EXPECT_NE(t["lock"].get<std::string>().find("ebizzy."), std::string::npos) << t.dump(2);
  EXPECT_NE(t["state"].get<std::string>().find("halted in pv_wait with IRQs off"),
            std::string::npos)
      << t.dump(2);
  EXPECT_GT(j["faults"]["dropped_kicks"].get<std::uint64_t>(), 0u);
  EXPECT_GT(j["vms"][0]["records"].get<std::uint64_t>(), 0u);
}

TEST(WorkloadProgress, EbizzyWithoutFaultsIsNotFlagged) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto j = harness::run_to_json(ebizzy(0, seed));
    EXPECT_FALSE(j.contains("liveness")) << "seed " << seed << ": " << j["liveness"].dump(2);
    EXPECT_GT(j["vms"][0]["records"].get<std::uint64_t>(), 0u);
  }
}

// Messaging's pipe mutexes sleep rather than halt in pv_wait, so no fault strands them.
// That its tasks are watched shows with a limit (1 us) shorter than one message takes: the
// watchdog fires and names a messaging task; at the default limit an ordinary run is clean.
scenario::Scenario messaging() {
  // 60 ms, so that the default limit (half the run) is longer than a woken receiver may
  // wait behind its vCPU's runnable senders: four tasks per vCPU take 6 ms turns.
  scenario::Scenario sc = testing::bare_metal(1, 4, "pvqspinlock", "messaging", 60, 0, 1);
  testing::set_param(sc, "groups", std::int64_t{2});
  testing::set_param(sc, "senders", std::int64_t{4});
  testing::set_param(sc, "receivers", std::int64_t{4});
  return sc;
}

TEST(WorkloadProgress, MessagingTasksAreWatched) {
  EXPECT_FALSE(harness::run_to_json(messaging()).contains("liveness"));
  scenario::Scenario sc = messaging();
  sc.run.watchdog_ms = 0.001;
  const auto j = harness::run_to_json(sc);
  ASSERT_TRUE(j.contains("liveness"));
  const std::string task = j["liveness"]["tasks"][0]["task"].get<std::string>();
  EXPECT_TRUE(task.find("sender/") != std::string::npos ||
              task.find("receiver/") != std::string::npos)
      << task;
}

TEST(WorkloadProgress, EbizzyTasksAreWatched) {
  scenario::Scenario sc = ebizzy(0);
  sc.run.watchdog_ms = 0.001;
  const auto j = harness::run_to_json(sc);
  ASSERT_TRUE(j.contains("liveness"));
  EXPECT_NE(j["liveness"]["tasks"][0]["task"].get<std::string>().find("ebizzy/"),
            std::string::npos);
}

}  // namespace
}  // namespace pvlock::sim
