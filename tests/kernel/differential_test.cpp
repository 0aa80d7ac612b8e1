// SPDX-License-Identifier: GPL-2.0-only
// Differential runs (harness/lock_diff.hpp) of the kernel's code against pvlock's twin on
// examples/overcommit-lockloop.toml, shortened: the kernel's pvqspinlock takes its PV path
// (halts queued waiters, kicks them on unlock) on every seed, and its score lies within the
// seed spread of pvlock's pvqspinlock.
#include <gtest/gtest.h>

#include <string>

#include "harness/lock_diff.hpp"

namespace pvlock {
namespace {

const std::string kScenario = std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml";
constexpr int kSeeds = 5;

const harness::DiffRow& row(const harness::LockDiff& d, const std::string& name) {
  for (const harness::DiffRow& r : d.rows)
    if (r.name == name) return r;
  ADD_FAILURE() << "no row " << name;
  static const harness::DiffRow none{};
  return none;
}

TEST(KernelDifferential, PvqspinlockScoreIsWithinTheSeedSpreadOfPvlocksAndTakesThePvPath) {
  const harness::LockDiff d = harness::diff_locks("pvqspinlock", "kernel:pvqspinlock", kScenario,
                                                  {"run.duration_ms=20"}, kSeeds);
  ASSERT_EQ(d.seeds.size(), static_cast<std::size_t>(kSeeds));
  const harness::DiffRow& score = row(d, "score");
  ASSERT_EQ(score.a.values.size(), static_cast<std::size_t>(kSeeds));
  ASSERT_EQ(score.b.values.size(), static_cast<std::size_t>(kSeeds));
  EXPECT_GT(score.a.min(), 0);
  EXPECT_TRUE(score.a.contains(score.b.mean()))
      << "kernel:pvqspinlock mean " << score.b.mean() << " outside pvqspinlock's " << score.a.min()
      << " .. " << score.a.max();
  // The kernel's PV path on every seed, not only on average.
  for (const char* event : {"pv_wait_node", "pv_kick_unlock"}) {
    const harness::DiffRow& r = row(d, event);
    ASSERT_EQ(r.b.values.size(), static_cast<std::size_t>(kSeeds)) << event;
    for (std::size_t s = 0; s < r.b.values.size(); ++s)
      EXPECT_GT(r.b.values[s], 0) << event << ", seed " << d.seeds[s];
  }
}

// The native (non-PV) qspinlock on the same over-committed host: pvlock's and the kernel's
// follow the same algorithm, so the score and the queue counters agree; the kernel counts no OSQ
// events. A lock against itself agrees on every row, a check of the comparison itself.
TEST(KernelDifferential, QspinlockAgreesWithPvlocksOnTheQueueCounters) {
  const harness::LockDiff d = harness::diff_locks("qspinlock", "kernel:qspinlock", kScenario,
                                                  {"run.duration_ms=10"}, kSeeds);
  for (const char* name : {"score", "lock_slowpath", "lock_pending", "lock_use_node2"})
    EXPECT_EQ(row(d, name).verdict, harness::DiffVerdict::agree) << name;
  EXPECT_EQ(row(d, "osq_lock").verdict, harness::DiffVerdict::not_counted);
  const harness::DiffRow& slowpath = row(d, "lock_slowpath");
  EXPECT_GT(slowpath.b.min(), 0) << "the kernel's qspinlock never queued: the test checked nothing";

  const harness::LockDiff self = harness::diff_locks("kernel:qspinlock", "kernel:qspinlock",
                                                     kScenario, {"run.duration_ms=5"}, 2);
  for (const harness::DiffRow& r : self.rows) {
    EXPECT_EQ(r.a.values, r.b.values) << r.name;
    EXPECT_NE(r.verdict, harness::DiffVerdict::differ) << r.name;
  }
}

}  // namespace
}  // namespace pvlock
