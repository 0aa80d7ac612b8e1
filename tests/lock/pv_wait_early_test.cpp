// SPDX-License-Identifier: GPL-2.0-only
// pv_wait_early(): when a queued (non-head) PV waiter stops spinning before SPIN_THRESHOLD
// and halts. Upstream (prev_halted) looks only at the predecessor's node state; the 2017
// rule (prev_halted_or_preempted) also halts when the predecessor's vCPU is preempted. With
// HookEnv every vCPU reads as preempted, and the spin threshold is so large that nobody
// halts for running out of spin: a halt can only come from the wait-early rule.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "lock/qspinlock_test_env.hpp"
#include "pvlock/lock/qspinlock.hpp"

namespace pvlock {
namespace {

using testing::HookEnv;
using Lock = PvQueuedSpinlock<HookEnv>;

template <class Pred>
bool eventually(Pred p, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!p()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

// Owner (this thread) holds the lock; A queues as head, B queues behind A. Returns the
// counters after everyone got the lock once.
LockEventCounts owner_head_and_waiter(WaitEarlyRule rule, bool expect_halt) {
  NativeEnv::policies() = LockPolicies{};
  NativeEnv::policies().qspinlock.wait_early = rule;
  NativeEnv::policies().qspinlock.spin_threshold = 1u << 30;
  HookEnv::all_preempted().store(true);
  HookEnv::reset_reached();
  Lock l;
  l.lock();
  NativeEnv::reset_counters();

  std::thread a([&] {
    l.lock();
    l.unlock();
  });
  // A is the queue head once it spins with the pending bit set.
  EXPECT_TRUE(eventually([&] { return (l.value() & qspin::kPendingVal) != 0; }));
  std::thread b([&] {
    l.lock();
    l.unlock();
  });
  EXPECT_TRUE(eventually([] { return HookEnv::reached(SpinSite::pv_wait_node).load(); }));
  if (expect_halt) {
    EXPECT_TRUE(
        eventually([] { return NativeEnv::read_counters()[LockEvent::pv_wait_early] > 0; }));
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // time to (wrongly) halt
  }
  l.unlock();
  a.join();
  b.join();
  HookEnv::all_preempted().store(false);
  EXPECT_FALSE(l.is_locked());
  return NativeEnv::read_counters();
}

TEST(PvWaitEarly, PreemptedPredecessorHaltsWithThe2017Rule) {
  const LockEventCounts c = owner_head_and_waiter(WaitEarlyRule::prev_halted_or_preempted, true);
  // (>= rather than ==: a kick token left on B's CPU id by an earlier test in the same
  // process can end one halt at once, and B then halts early a second time.)
  EXPECT_GE(c[LockEvent::pv_wait_early], 1u);
  EXPECT_EQ(c[LockEvent::pv_wait_early], c[LockEvent::pv_wait_node]);
  // A took the lock, found B halted, made it "hashed" and set _Q_SLOW_VAL for it
  // (pv_kick_node); A's unlock then unhashed B and kicked it.
  EXPECT_EQ(c[LockEvent::pv_kick_unlock], 1u);
  EXPECT_GE(c[LockEvent::pv_hash_hops], 1u);
  EXPECT_EQ(c[LockEvent::pv_wait_head], 0u);
}

TEST(PvWaitEarly, UpstreamIgnoresPreemption) {
  const LockEventCounts c = owner_head_and_waiter(WaitEarlyRule::prev_halted, false);
  EXPECT_EQ(c[LockEvent::pv_wait_early], 0u);
  EXPECT_EQ(c[LockEvent::pv_wait_node], 0u);
  EXPECT_EQ(c[LockEvent::pv_kick_unlock], 0u);
}

TEST(PvWaitEarly, NeverRuleNeverHaltsEarly) {
  const LockEventCounts c = owner_head_and_waiter(WaitEarlyRule::never, false);
  EXPECT_EQ(c[LockEvent::pv_wait_early], 0u);
  EXPECT_EQ(c[LockEvent::pv_wait_node], 0u);
}

TEST(PvWaitEarly, HaltedHeadMakesSuccessorHaltEarly) {
  // The upstream rule: the head A runs out of a short spin while the owner holds on, hashes
  // the lock and halts ("hashed"); B, queued behind it, sees a non-running predecessor at
  // its very first check and halts early. Hybrid stealing is off: with it, B would not
  // queue behind a halted head at all but keep trying to steal (the point of 11752adb).
  NativeEnv::policies() = LockPolicies{};
  NativeEnv::policies().qspinlock.spin_threshold = 64;
  NativeEnv::policies().qspinlock.hybrid_stealing = false;
  HookEnv::all_preempted().store(false);
  HookEnv::reset_reached();
  Lock l;
  l.lock();
  NativeEnv::reset_counters();
  std::thread a([&] {
    l.lock();
    l.unlock();
  });
  EXPECT_TRUE(eventually([] { return NativeEnv::read_counters()[LockEvent::pv_wait_head] > 0; }));
  // A stale kick token of A's CPU id could make one halt return at once; let it settle.
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::thread b([&] {
    l.lock();
    l.unlock();
  });
  EXPECT_TRUE(eventually([] { return NativeEnv::read_counters()[LockEvent::pv_wait_early] > 0; }));
  l.unlock();  // SLOW: unhash A and kick it
  a.join();
  b.join();
  const LockEventCounts c = NativeEnv::read_counters();
  EXPECT_GE(c[LockEvent::pv_kick_unlock], 1u);
  EXPECT_GE(c[LockEvent::pv_wait_node], 1u);
  EXPECT_FALSE(l.is_locked());
}

}  // namespace
}  // namespace pvlock
