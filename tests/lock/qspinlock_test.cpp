// SPDX-License-Identifier: GPL-2.0-only
// qspinlock and pvqspinlock on real threads: BasicLockable semantics, exclusion under
// over-subscription with every knob setting, and the lock event counters of each path.
#include "pvlock/lock/qspinlock.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "native/torture.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/knobs.hpp"

namespace pvlock {
namespace {

int cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::uint64_t counter(const LockEventCounts& c, LockEvent e) { return c[e]; }

template <class L>
class QspinlockBasics : public ::testing::Test {
 protected:
  void SetUp() override { NativeEnv::policies() = LockPolicies{}; }
};
using BothQspinlocks = ::testing::Types<QueuedSpinlock<NativeEnv>, PvQueuedSpinlock<NativeEnv>>;
TYPED_TEST_SUITE(QspinlockBasics, BothQspinlocks);

TYPED_TEST(QspinlockBasics, TryLockFailsWhileHeld) {
  TypeParam l;
  EXPECT_FALSE(l.is_locked());
  l.lock();
  EXPECT_TRUE(l.is_locked());
  EXPECT_EQ(l.value(), qspin::kLockedVal);
  EXPECT_FALSE(l.try_lock());
  l.unlock();
  EXPECT_FALSE(l.is_locked());
  ASSERT_TRUE(l.try_lock());
  l.unlock();
  EXPECT_EQ(l.value(), 0u);
}

TYPED_TEST(QspinlockBasics, UncontendedNeverEntersTheSlowPath) {
  TypeParam a, b;
  NativeEnv::reset_counters();
  for (int i = 0; i < 1000; ++i) {
    std::lock_guard g(a);
    std::lock_guard h(b);  // holding another lock is not nesting: the slow path owns nodes
  }
  const LockEventCounts c = NativeEnv::read_counters();
  EXPECT_EQ(counter(c, LockEvent::lock_slowpath), 0u);
  EXPECT_EQ(counter(c, LockEvent::lock_pending), 0u);
  EXPECT_EQ(counter(c, LockEvent::pv_wait_node), 0u);
  EXPECT_EQ(counter(c, LockEvent::pv_lock_stealing), 0u);
}

TYPED_TEST(QspinlockBasics, NodesAreFreedAtTheEndOfTheSlowPath) {
  // After contended acquisitions every CPU's node count is back to 0.
  TypeParam l;
  long counter = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::lock_guard g(l);
        ++counter;
      }
      const int cpu = NativeEnv::cpu();
      EXPECT_EQ(qspin::cpu_nodes<NativeEnv>(cpu).nodes[0].count, 0u);
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(counter, 8000);
  EXPECT_FALSE(l.is_locked());
}

// ---- Exclusion under over-subscription, every knob setting --------------------------------

struct TortureCase {
  std::string lock;
  std::vector<std::string> knobs;
  std::string name;
};

class QspinlockTorture
    : public ::testing::TestWithParam<std::tuple<TortureCase, int /*threads per core*/>> {};

TEST_P(QspinlockTorture, ExcludesAndProgresses) {
  const auto& [tc, per_core] = GetParam();
  native::TortureOptions o;
  o.lock = tc.lock;
  o.threads = per_core * cores();
  o.duration_s = 0.25;
  o.hold_ns = 100;
  for (const auto& k : tc.knobs) ASSERT_EQ(apply_knob_assignment(o.policies, k), std::nullopt);
  const native::TortureResult r = native::run_torture(o);
  EXPECT_EQ(r.violations, 0u);
  EXPECT_FALSE(r.stuck);
  EXPECT_GT(r.acquisitions, 0u);
  if (o.policies.qspinlock.virt_spin_lock && tc.lock == "qspinlock") {
    EXPECT_EQ(r.counters[LockEvent::lock_slowpath], 0u) << "virt_spin_lock bypasses the queue";
  }
}

const TortureCase kCases[] = {
    {"qspinlock", {}, "q_default"},
    {"qspinlock", {"pending_loops=1"}, "q_pending1"},
    {"qspinlock", {"pending_loops=65536"}, "q_pending64k"},
    {"qspinlock", {"virt_spin_lock=true"}, "q_virtspin"},
    {"pvqspinlock", {}, "pv_default"},
    {"pvqspinlock", {"spin_threshold=1"}, "pv_thr1"},
    {"pvqspinlock", {"spin_threshold=256"}, "pv_thr256"},
    {"pvqspinlock", {"prev_check_mask=0"}, "pv_mask0"},
    {"pvqspinlock", {"wait_early=prev_halted_or_preempted"}, "pv_preempted"},
    {"pvqspinlock", {"wait_early=never"}, "pv_never"},
    {"pvqspinlock", {"hybrid_stealing=false"}, "pv_nohybrid"},
    {"pvqspinlock", {"spin_threshold=16", "wait_early=never", "hybrid_stealing=false"}, "pv_combo"},
    // The guest profiles' historic lock: 4.2 (no stealing, no early wait, kick at hand-off)
    // and 4.3-4.4 (kick at unlock), the second with a short spin so that waiters halt.
    {"pvqspinlock",
     {"lock_stealing=false", "hybrid_stealing=false", "wait_early=never", "kick_at_unlock=false"},
     "pv_v4_2"},
    {"pvqspinlock",
     {"spin_threshold=16", "lock_stealing=false", "hybrid_stealing=false", "wait_early=never",
      "kick_at_unlock=false"},
     "pv_v4_2_thr16"},
    {"pvqspinlock",
     {"spin_threshold=16", "lock_stealing=false", "hybrid_stealing=false", "wait_early=never"},
     "pv_v4_3_thr16"},
};

INSTANTIATE_TEST_SUITE_P(Knobs, QspinlockTorture,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(1, 2, 4)),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + "_x" +
                                  std::to_string(std::get<1>(info.param));
                         });

// ---- Counters of the contended paths ------------------------------------------------------

// Torture runs of `seconds` until `enough` holds for the summed counters, at most `tries`
// runs: whether an OS scheduler deschedules a waiter at the right moment is not under the
// test's control, only that it happens at all within a few tries.
template <class Pred>
LockEventCounts torture_until(native::TortureOptions o, Pred enough, int tries = 6) {
  LockEventCounts sum;
  for (int i = 0; i < tries; ++i) {
    const native::TortureResult r = native::run_torture(o);
    EXPECT_TRUE(r.success());
    sum += r.counters;
    if (enough(sum)) break;
  }
  return sum;
}

TEST(QspinlockCounters, OversubscribedPvWaitersHaltAndAreKicked) {
  native::TortureOptions o;
  o.lock = "pvqspinlock";
  o.threads = 8;
  o.duration_s = 0.5;
  o.hold_ns = 1000;
  o.policies.qspinlock.spin_threshold = 256;
  const LockEventCounts c = torture_until(o, [](const LockEventCounts& s) {
    return s[LockEvent::pv_wait_node] > 0 && s[LockEvent::pv_kick_unlock] > 0;
  });
  EXPECT_GT(c[LockEvent::pv_wait_node], 0u);
  EXPECT_GT(c[LockEvent::pv_kick_unlock], 0u);
  EXPECT_GT(c[LockEvent::lock_slowpath], 0u);
  // Every halted head was hashed exactly once and unhashed by a kicking unlock, except
  // those that found the lock free after hashing (they unhash themselves).
  EXPECT_GE(c[LockEvent::pv_hash_hops], c[LockEvent::pv_kick_unlock]);
  // Native pv_kick is a futex wake; every wake that follows a kick is accounted.
  EXPECT_LE(c[LockEvent::pv_kick_wake], c[LockEvent::pv_kick_unlock]);
  EXPECT_EQ(c[LockEvent::lock_pending], 0u) << "the PV slow path has no pending path";
}

TEST(QspinlockCounters, HybridStealingStealsUnderOversubscription) {
  native::TortureOptions o;
  o.lock = "pvqspinlock";
  o.threads = 4 * cores();
  o.duration_s = 0.3;
  const LockEventCounts c =
      torture_until(o, [](const LockEventCounts& s) { return s[LockEvent::pv_lock_stealing] > 0; });
  EXPECT_GT(c[LockEvent::pv_lock_stealing], 0u);
}

// The 4.2-4.4 lock under the same over-subscription: waiters halt and are kicked, but
// nobody steals and no queued waiter halts early.
TEST(QspinlockCounters, HistoricPvLockNeitherStealsNorWaitsEarly) {
  native::TortureOptions o;
  o.lock = "pvqspinlock";
  o.threads = 4 * cores();
  o.duration_s = 0.3;
  o.hold_ns = 1000;
  o.policies.qspinlock.spin_threshold = 256;
  o.policies.qspinlock.lock_stealing = false;
  o.policies.qspinlock.hybrid_stealing = false;
  o.policies.qspinlock.wait_early = WaitEarlyRule::never;
  o.policies.qspinlock.kick_at_unlock = false;
  const LockEventCounts c = torture_until(o, [](const LockEventCounts& s) {
    return s[LockEvent::pv_wait_node] > 0 && s[LockEvent::pv_kick_wake] > 0;
  });
  EXPECT_GT(c[LockEvent::pv_wait_node], 0u);
  EXPECT_GT(c[LockEvent::pv_kick_wake], 0u);
  EXPECT_EQ(c[LockEvent::pv_lock_stealing], 0u);
  EXPECT_EQ(c[LockEvent::pv_wait_early], 0u);
}

TEST(QspinlockCounters, NativeContentionUsesPendingOrQueue) {
  native::TortureOptions o;
  o.lock = "qspinlock";
  o.threads = 2 * cores();
  o.duration_s = 0.3;
  o.hold_ns = 200;
  const LockEventCounts c = torture_until(o, [](const LockEventCounts& s) {
    return s[LockEvent::lock_slowpath] + s[LockEvent::lock_pending] > 0;
  });
  EXPECT_GT(c[LockEvent::lock_slowpath] + c[LockEvent::lock_pending], 0u);
  EXPECT_EQ(c[LockEvent::pv_wait_node] + c[LockEvent::pv_lock_stealing], 0u);
  EXPECT_EQ(c[LockEvent::virt_spin_lock], 0u);
}

TEST(QspinlockCounters, VirtSpinLockCountsTestAndSet) {
  native::TortureOptions o;
  o.lock = "qspinlock";
  o.threads = 2 * cores();
  o.duration_s = 0.3;
  o.hold_ns = 200;
  o.policies.qspinlock.virt_spin_lock = true;
  const LockEventCounts c =
      torture_until(o, [](const LockEventCounts& s) { return s[LockEvent::virt_spin_lock] > 0; });
  EXPECT_GT(c[LockEvent::virt_spin_lock], 0u);
  EXPECT_EQ(c[LockEvent::lock_slowpath] + c[LockEvent::lock_pending], 0u);
}

}  // namespace
}  // namespace pvlock
