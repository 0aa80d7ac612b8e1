// SPDX-License-Identifier: GPL-2.0-only
// Same scenario + seed -> byte-identical results outside "perf"; another seed differs.
#include <gtest/gtest.h>

#include <thread>

#include "harness/run.hpp"
#include "sim_helpers.hpp"

namespace pvlock::sim {
namespace {

std::string without_perf(nlohmann::ordered_json j) {
  j.erase("perf");
  return j.dump();
}

scenario::Scenario lockloop(std::uint64_t seed, const std::string& lock) {
  scenario::Scenario sc = testing::bare_metal(2, 4, lock, "lockloop", 1, 0.2, seed);
  scenario::Dist c;
  c.kind = scenario::Dist::Kind::exponential;
  c.mean = 400;
  testing::set_param(sc, "compute_ns", c);
  testing::set_param(sc, "hold_ns", testing::constant(100));
  testing::set_param(sc, "tasks_per_vcpu", std::int64_t{2});
  return sc;
}

TEST(Determinism, SameSeedSameBytes) {
  for (const char* lock : {"tas", "mcs", "ticket"}) {
    const auto a = without_perf(harness::run_to_json(lockloop(7, lock)));
    const auto b = without_perf(harness::run_to_json(lockloop(7, lock)));
    EXPECT_EQ(a, b) << lock;
    EXPECT_NE(a, without_perf(harness::run_to_json(lockloop(8, lock)))) << lock;
  }
}

TEST(Determinism, ParallelRunsAgreeWithSerialOnes) {
  const auto serial = without_perf(harness::run_to_json(lockloop(3, "mcs")));
  std::string par[2];
  std::thread t0([&] { par[0] = without_perf(harness::run_to_json(lockloop(3, "mcs"))); });
  std::thread t1([&] { par[1] = without_perf(harness::run_to_json(lockloop(3, "mcs"))); });
  t0.join();
  t1.join();
  EXPECT_EQ(par[0], serial);
  EXPECT_EQ(par[1], serial);
}

}  // namespace
}  // namespace pvlock::sim
