// SPDX-License-Identifier: GPL-2.0-only
// The over-commit acceptance check, on the shipped example (examples/overcommit-lockloop.toml,
// 2 VMs x 16 vCPUs on 16 pCPUs, lockloop holding one spinlock ~1 us):
//   - at 2x over-commit the PV qspinlock scores at least twice the native one (over four
//     seeds), because a strict FIFO queue keeps handing the lock to preempted waiters
//     (lock-waiter preemption) while PV waiters halt and the lock can be stolen;
//   - with one VM (1x) the PV slow path costs at most 10 %.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/host/scenario_run.hpp"

namespace pvlock::sim {
namespace {

nlohmann::ordered_json run_example(const std::vector<std::string>& overrides) {
  return test::run_file(std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml",
                        overrides);
}

double mean_score(const nlohmann::ordered_json& j) {
  double sum = 0;
  for (const auto& vm : j.at("vms")) sum += vm.at("score").get<double>();
  return sum / static_cast<double>(j.at("vms").size());
}

TEST(OvercommitAcceptance, PvQspinlockAtLeastTwiceNativeAt2x) {
  // Over seeds 1-4, not one: a single over-committed run of the PV guest is bimodal (620-710 k
  // ops/s per VM in most seeds, 270-300 k in seeds 2 and 8, against a native 147-182 k), so
  // single seeds range from 1.66x to 4.46x; over seeds 1-4 the sums' ratio is 3.43x.
  double pv_sum = 0, native_sum = 0;
  for (int seed = 1; seed <= 4; ++seed) {
    const std::string s = "run.seed=" + std::to_string(seed);
    const auto native = run_example({"vm[0].guest.lock=qspinlock", s});
    const auto pv = run_example({s});
    native_sum += mean_score(native);
    pv_sum += mean_score(pv);
    // Why: the native queue met preempted waiters; the PV one halted and kicked.
    EXPECT_GT(native.at("host").at("lock_waiter_preemptions").get<double>(), 0.0) << s;
    EXPECT_GT(test::counter(pv, "pv_wait_node"), 0.0) << s;
    EXPECT_GT(test::counter(pv, "pv_kick_unlock"), 0.0) << s;
  }
  EXPECT_GE(pv_sum, 2.0 * native_sum) << "pv " << pv_sum / 4 << " native " << native_sum / 4;
}

TEST(OvercommitAcceptance, PvQspinlockWithinTenPercentAt1x) {
  const auto native = run_example({"vm[0].count=1", "vm[0].guest.lock=qspinlock"});
  const auto pv = run_example({"vm[0].count=1"});
  EXPECT_GE(mean_score(pv), 0.9 * mean_score(native))
      << "pv " << mean_score(pv) << " native " << mean_score(native);
}

}  // namespace
}  // namespace pvlock::sim
