// SPDX-License-Identifier: GPL-2.0-only
// The optimistic spin queue: hand-off, and the unqueue paths (steps A, B, C of osq_lock.c)
// forced at chosen moments with OsqHookEnv's need_resched() / vcpu_is_preempted().
#include "pvlock/lock/osq.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "lock/osq_test_env.hpp"

namespace pvlock {
namespace {

using testing::eventually;
using testing::on_cpu;
using testing::OsqHookEnv;
using Q = Osq<OsqHookEnv>;

constexpr int kA = 201, kB = 202, kC = 203, kD = 204;

std::uintptr_t node_word(int cpu) { return reinterpret_cast<std::uintptr_t>(&Q::node_of(cpu)); }
std::uintptr_t next_of(int cpu) { return Q::node_of(cpu).next.load(); }
std::uintptr_t prev_of(int cpu) { return Q::node_of(cpu).prev.load(); }

class OsqTest : public testing::HookEnvTest {
 protected:
  static std::uint64_t counter(LockEvent e) { return NativeEnv::read_counters()[e]; }

  // A thread on `cpu` that takes the OSQ, stores the outcome, and (if it got it) holds it
  // until `release` is set.
  struct Waiter {
    std::atomic<int> result{-1};  // -1 running, 0 gave up, 1 acquired
    std::atomic<bool> release{false};
    std::thread t;
    void start(Q& q, int cpu) {
      t = on_cpu(cpu, [this, &q] {
        const bool ok = q.lock();
        result = ok ? 1 : 0;
        if (!ok) return;
        while (!release.load()) std::this_thread::yield();
        q.unlock();
      });
    }
    void finish() {
      release = true;
      t.join();
    }
  };

  // Starts a waiter on `cpu` and waits until it is linked behind `prev_cpu`.
  static void enqueue(Q& q, Waiter& w, int cpu, int prev_cpu) {
    w.start(q, cpu);
    ASSERT_TRUE(eventually([&] { return next_of(prev_cpu) == node_word(cpu); }));
    ASSERT_EQ(q.tail(), Q::encode_cpu(cpu));
  }
};

TEST_F(OsqTest, UncontendedLockAndUnlock) {
  Q q;
  EXPECT_FALSE(q.is_locked());
  ASSERT_TRUE(q.lock());
  EXPECT_EQ(q.tail(), Q::encode_cpu(OsqHookEnv::cpu()));
  q.unlock();
  EXPECT_FALSE(q.is_locked());
  EXPECT_EQ(counter(LockEvent::osq_lock), 0u);
}

TEST_F(OsqTest, UnlockHandsOverToTheNextWaiter) {
  Q q;
  Waiter a, b;
  a.start(q, kA);
  ASSERT_TRUE(eventually([&] { return a.result == 1; }));
  enqueue(q, b, kB, kA);
  a.finish();
  ASSERT_TRUE(eventually([&] { return b.result == 1; }));
  b.finish();
  EXPECT_FALSE(q.is_locked());
  EXPECT_EQ(counter(LockEvent::osq_lock), 1u);
  EXPECT_EQ(counter(LockEvent::osq_lock_acquired), 1u);
}

TEST_F(OsqTest, LastWaiterLeavesOnNeedReschedAndMovesTailBack) {
  Q q;
  Waiter a, b;
  a.start(q, kA);
  ASSERT_TRUE(eventually([&] { return a.result == 1; }));
  enqueue(q, b, kB, kA);
  OsqHookEnv::hooks().resched[kB] = true;
  b.t.join();
  EXPECT_EQ(b.result, 0);
  // Step A undid A->next, step B handed the tail back to A.
  EXPECT_EQ(next_of(kA), 0u);
  EXPECT_EQ(q.tail(), Q::encode_cpu(kA));
  EXPECT_EQ(counter(LockEvent::osq_unqueue), 1u);
  EXPECT_EQ(counter(LockEvent::osq_unqueue_preempted), 0u);
  a.finish();
  EXPECT_FALSE(q.is_locked());
}

TEST_F(OsqTest, WaiterLeavesWhenPredecessorVcpuIsPreempted) {
  OsqHookEnv::policies().osq.break_on_prev_preempted = true;
  Q q;
  Waiter a, b;
  a.start(q, kA);
  ASSERT_TRUE(eventually([&] { return a.result == 1; }));
  enqueue(q, b, kB, kA);
  OsqHookEnv::hooks().preempted[kA] = true;  // the predecessor's vCPU, not the waiter's own
  b.t.join();
  EXPECT_EQ(b.result, 0);
  EXPECT_EQ(counter(LockEvent::osq_unqueue), 1u);
  EXPECT_EQ(counter(LockEvent::osq_unqueue_preempted), 1u);
  a.finish();
  EXPECT_FALSE(q.is_locked());
}

TEST_F(OsqTest, OnlyThePredecessorsPreemptionCounts) {
  OsqHookEnv::policies().osq.break_on_prev_preempted = true;
  Q q;
  Waiter a, b;
  a.start(q, kA);
  ASSERT_TRUE(eventually([&] { return a.result == 1; }));
  enqueue(q, b, kB, kA);
  OsqHookEnv::hooks().preempted[kB] = true;  // the waiter's own vCPU: irrelevant to the OSQ
  const std::uint64_t before = OsqHookEnv::hooks().preempted_calls.load();
  ASSERT_TRUE(
      eventually([&] { return OsqHookEnv::hooks().preempted_calls.load() > before + 1000; }));
  EXPECT_EQ(b.result, -1);
  a.finish();
  ASSERT_TRUE(eventually([&] { return b.result == 1; }));
  b.finish();
  EXPECT_EQ(counter(LockEvent::osq_unqueue), 0u);
}

TEST_F(OsqTest, KnobOffIgnoresPreemptedPredecessor) {
  OsqHookEnv::policies().osq.break_on_prev_preempted = false;
  Q q;
  Waiter a, b;
  a.start(q, kA);
  ASSERT_TRUE(eventually([&] { return a.result == 1; }));
  enqueue(q, b, kB, kA);
  OsqHookEnv::hooks().preempted[kA] = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(b.result, -1);
  // Without seed 003 the spin never even asks.
  EXPECT_EQ(OsqHookEnv::hooks().preempted_calls.load(), 0u);
  a.finish();
  ASSERT_TRUE(eventually([&] { return b.result == 1; }));
  b.finish();
  EXPECT_EQ(counter(LockEvent::osq_unqueue), 0u);
}

TEST_F(OsqTest, MiddleWaiterLeavesAndSplicesItsNeighbours) {
  Q q;
  Waiter a, b, c;
  a.start(q, kA);
  ASSERT_TRUE(eventually([&] { return a.result == 1; }));
  enqueue(q, b, kB, kA);
  enqueue(q, c, kC, kB);
  OsqHookEnv::hooks().resched[kB] = true;
  b.t.join();
  EXPECT_EQ(b.result, 0);
  // Step C: C's prev is A and A's next is C; the tail stays with C.
  EXPECT_EQ(prev_of(kC), node_word(kA));
  EXPECT_EQ(next_of(kA), node_word(kC));
  EXPECT_EQ(q.tail(), Q::encode_cpu(kC));
  a.finish();
  ASSERT_TRUE(eventually([&] { return c.result == 1; }));
  c.finish();
  EXPECT_FALSE(q.is_locked());
}

TEST_F(OsqTest, AdjacentWaitersLeavingTogetherKeepTheQueueIntact) {
  // B and C unqueue at the same moment: C's step A races with B's steps B/C, so C may have
  // to reload a prev rewritten by B. Repeated to vary the interleaving.
  for (int round = 0; round < 20; ++round) {
    OsqHookEnv::reset_hooks();
    Q q;
    Waiter a, b, c, d;
    a.start(q, kA);
    ASSERT_TRUE(eventually([&] { return a.result == 1; }));
    enqueue(q, b, kB, kA);
    enqueue(q, c, kC, kB);
    enqueue(q, d, kD, kC);
    OsqHookEnv::hooks().resched[kC] = true;
    OsqHookEnv::hooks().resched[kB] = true;
    b.t.join();
    c.t.join();
    EXPECT_EQ(b.result, 0);
    EXPECT_EQ(c.result, 0);
    EXPECT_EQ(next_of(kA), node_word(kD));
    EXPECT_EQ(prev_of(kD), node_word(kA));
    EXPECT_EQ(q.tail(), Q::encode_cpu(kD));
    a.finish();
    ASSERT_TRUE(eventually([&] { return d.result == 1; }));
    d.finish();
    EXPECT_FALSE(q.is_locked());
  }
}

TEST_F(OsqTest, LeavingRacesWithUnlock) {
  // B is told to leave while A hands the queue over: B either got it (step A's cmpxchg lost
  // to the unlock) or left cleanly; the queue is consistent either way.
  int got = 0, left = 0;
  for (int round = 0; round < 200; ++round) {
    OsqHookEnv::reset_hooks();
    Q q;
    Waiter a, b;
    a.start(q, kA);
    ASSERT_TRUE(eventually([&] { return a.result == 1; }));
    enqueue(q, b, kB, kA);
    OsqHookEnv::hooks().resched[kB] = true;
    a.finish();
    ASSERT_TRUE(eventually([&] { return b.result != -1; }));
    if (b.result == 1) {
      ++got;
      EXPECT_EQ(q.tail(), Q::encode_cpu(kB));
      b.finish();
    } else {
      ++left;
      b.t.join();
    }
    EXPECT_FALSE(q.is_locked());
  }
  EXPECT_EQ(got + left, 200);
}

TEST_F(OsqTest, StressWithRandomDepartures) {
  // Waiters leave at random (need_resched and preempted predecessors toggled by a chaos
  // thread); owners must never overlap and the queue must drain.
  OsqHookEnv::policies().osq.break_on_prev_preempted = true;
  Q q;
  constexpr int kThreads = 6;
  std::atomic<int> owners{0};
  std::atomic<int> overlaps{0};
  std::atomic<bool> stop{false};
  std::atomic<long> acquired{0}, gave_up{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i)
    ts.push_back(on_cpu(210 + i, [&] {
      while (!stop.load()) {
        if (!q.lock()) {
          gave_up.fetch_add(1);
          continue;
        }
        if (owners.fetch_add(1) != 0) overlaps.fetch_add(1);
        for (int k = 0; k < 50; ++k) OsqHookEnv::cpu_relax();
        owners.fetch_sub(1);
        q.unlock();
        acquired.fetch_add(1);
      }
    }));
  std::thread chaos([&] {
    std::mt19937 rng(7);
    while (!stop.load()) {
      const int c = 210 + static_cast<int>(rng() % kThreads);
      auto& flag = (rng() & 1) ? OsqHookEnv::hooks().resched[c] : OsqHookEnv::hooks().preempted[c];
      flag = true;
      std::this_thread::yield();
      flag = false;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  chaos.join();
  for (auto& t : ts) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GT(acquired.load(), 0);
  EXPECT_FALSE(q.is_locked());
}

}  // namespace
}  // namespace pvlock
