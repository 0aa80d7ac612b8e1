// SPDX-License-Identifier: GPL-2.0-only
// The kernel mutex: semantics, the HANDOFF/PICKUP protocol (forced step by step with
// OsqHookEnv), owner-spinning that stops on a preempted owner vCPU, and torture-style mutual
// exclusion at 1x-4x threads per core.
#include "pvlock/lock/mutex.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <tuple>

#include "lock/osq_test_env.hpp"
#include "native/torture.hpp"
#include "pvlock/env/native.hpp"

namespace pvlock {
namespace {

using testing::eventually;
using testing::on_cpu;
using testing::OsqHookEnv;
using testing::task_of;
using M = Mutex<OsqHookEnv>;

std::uint64_t counter(LockEvent e) { return NativeEnv::read_counters()[e]; }

class MutexTest : public testing::HookEnvTest {};

// A thread on a fixed CPU that takes the mutex, reports it, and holds it until released.
struct Holder {
  std::atomic<bool> acquired{false};
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  std::thread t;
  void start(M& m, int cpu) {
    t = on_cpu(cpu, [this, &m] {
      started = true;
      m.lock();
      acquired = true;
      while (!release.load()) std::this_thread::yield();
      m.unlock();
    });
    // Bound to its CPU before returning, so that "not on a CPU" means "asleep".
    while (!started.load()) std::this_thread::yield();
  }
  void finish() {
    release = true;
    t.join();
  }
};

bool sleeping(int cpu) { return !NativeEnv::task_on_cpu(task_of(cpu)); }

// A holds the mutex; B (which may not spin) queues and sleeps; A's unlock wakes B, but B is
// held back after waking and C takes the free lock first. Returns once C owns it.
void first_waiter_overtaken(M& m, Holder& a, int ka, Holder& b, int kb, Holder& c, int kc) {
  a.start(m, ka);
  ASSERT_TRUE(eventually([&] { return a.acquired.load(); }));
  OsqHookEnv::hooks().resched[kb] = true;
  b.start(m, kb);
  ASSERT_TRUE(eventually([&] { return (m.owner_word() & M::kWaiters) != 0 && sleeping(kb); }));
  OsqHookEnv::hooks().hold_after_wake[kb] = true;
  a.finish();
  c.start(m, kc);
  ASSERT_TRUE(eventually([&] { return c.acquired.load(); }));
}

TEST_F(MutexTest, LockTryLockUnlock) {
  Mutex<NativeEnv> m;
  EXPECT_FALSE(m.is_locked());
  m.lock();
  EXPECT_EQ(m.owner(), NativeEnv::current());
  std::thread([&] { EXPECT_FALSE(m.try_lock()); }).join();
  m.unlock();
  EXPECT_EQ(m.owner_word(), 0u);
  ASSERT_TRUE(m.try_lock());
  m.unlock();
  EXPECT_EQ(counter(LockEvent::mutex_fastpath), 1u);
}

TEST_F(MutexTest, WokenFirstWaiterThatLosesGetsTheNextUnlockByHandoff) {
  constexpr int kA = 231, kB = 232, kC = 233;
  M m;
  Holder a, b, c;
  // B may not spin (need_resched), so it queues and sleeps; A releases and wakes B, but C
  // takes the free lock before B runs: lock stealing.
  first_waiter_overtaken(m, a, kA, b, kB, c, kC);
  EXPECT_EQ(m.owner(), task_of(kC));

  // B retries as the first waiter, loses, and claims HANDOFF before sleeping again.
  OsqHookEnv::hooks().hold_after_wake[kB] = false;
  ASSERT_TRUE(eventually([&] { return (m.owner_word() & M::kHandoff) != 0 && sleeping(kB); }));
  EXPECT_FALSE(b.acquired.load());

  // C's unlock must hand the lock to B (PICKUP) instead of releasing it.
  OsqHookEnv::hooks().hold_after_wake[kB] = true;
  c.finish();
  EXPECT_EQ(m.owner(), task_of(kB));
  EXPECT_NE(m.owner_word() & M::kPickup, 0u);
  EXPECT_EQ(m.owner_word() & M::kHandoff, 0u);
  EXPECT_FALSE(m.try_lock());  // nobody can steal a handed-off lock
  EXPECT_EQ(counter(LockEvent::mutex_handoff), 1u);

  OsqHookEnv::hooks().hold_after_wake[kB] = false;
  ASSERT_TRUE(eventually([&] { return b.acquired.load(); }));
  EXPECT_EQ(m.owner_word(), reinterpret_cast<std::uintptr_t>(task_of(kB)));  // flags cleared
  b.finish();
  EXPECT_FALSE(m.is_locked());
  EXPECT_GE(counter(LockEvent::mutex_sleep), 2u);
}

TEST_F(MutexTest, WithoutHandoffTheWokenWaiterOnlyRetries) {
  // Before 9d659ae14b54 (v4.10): the woken first waiter that loses neither claims HANDOFF
  // nor spins; it sleeps again and the next unlock simply releases the lock.
  OsqHookEnv::policies().handoff.mutex = false;
  constexpr int kA = 241, kB = 242, kC = 243;
  M m;
  Holder a, b, c;
  first_waiter_overtaken(m, a, kA, b, kB, c, kC);

  // B wakes, loses to C and goes back to sleep without HANDOFF.
  OsqHookEnv::hooks().hold_after_wake[kB] = false;
  ASSERT_TRUE(eventually([&] { return counter(LockEvent::mutex_sleep) >= 2 && sleeping(kB); }));
  EXPECT_EQ(m.owner_word() & M::kHandoff, 0u);
  EXPECT_FALSE(b.acquired.load());

  // C's unlock releases the word (WAITERS stays) and wakes B, who can still be overtaken.
  OsqHookEnv::hooks().hold_after_wake[kB] = true;
  c.finish();
  EXPECT_EQ(m.owner_word(), M::kWaiters);
  ASSERT_TRUE(m.try_lock());  // a running task steals the free lock
  m.unlock();
  EXPECT_EQ(counter(LockEvent::mutex_handoff), 0u);

  OsqHookEnv::hooks().hold_after_wake[kB] = false;
  ASSERT_TRUE(eventually([&] { return b.acquired.load(); }));
  b.finish();
  EXPECT_FALSE(m.is_locked());
}

// The first waiter's HANDOFF request racing an unlock, in both eras: A releases and wakes B;
// B is held between deciding it is first and its retry (where the caller lets C take the
// free lock). Returns with B parked there.
void handoff_request_races_unlock(M& m, Holder& a, int ka, Holder& b, int kb) {
  a.start(m, ka);
  ASSERT_TRUE(eventually([&] { return a.acquired.load(); }));
  OsqHookEnv::hooks().resched[kb] = true;  // B never spins: every retry is one trylock
  b.start(m, kb);
  ASSERT_TRUE(eventually([&] { return (m.owner_word() & M::kWaiters) != 0 && sleeping(kb); }));
  OsqHookEnv::hooks().hold_after_wake[kb] = true;
  a.finish();
  OsqHookEnv::hooks().hold_in_prepare[kb] = true;
  OsqHookEnv::hooks().hold_after_wake[kb] = false;
  ASSERT_TRUE(eventually([&] { return OsqHookEnv::hooks().parked[kb].load(); }));
}

TEST_F(MutexTest, OrOwnerEraLosesAHandoffRequestedOnAFreeLock) {
  // v4.10-5.14: B ORs HANDOFF into the free word; C's trylock takes the lock and drops the
  // flag; B, whose `first` is already set, never asks again, so C's unlock just releases.
  OsqHookEnv::policies().handoff.mutex_trylock = MutexTrylock::or_owner;
  constexpr int kA = 261, kB = 262, kC = 263;
  M m;
  Holder a, b, c;
  handoff_request_races_unlock(m, a, kA, b, kB);
  EXPECT_EQ(m.owner_word(), M::kWaiters | M::kHandoff);  // free, with B's request on it
  c.start(m, kC);
  ASSERT_TRUE(eventually([&] { return c.acquired.load(); }));
  EXPECT_EQ(m.owner_word() & M::kHandoff, 0u);

  OsqHookEnv::hooks().hold_in_prepare[kB] = false;
  ASSERT_TRUE(eventually([&] { return counter(LockEvent::mutex_sleep) >= 2 && sleeping(kB); }));
  EXPECT_EQ(m.owner_word() & M::kHandoff, 0u);  // not raised again

  OsqHookEnv::hooks().hold_after_wake[kB] = true;
  c.finish();
  EXPECT_EQ(m.owner_word(), M::kWaiters);  // released, not handed to B
  EXPECT_EQ(counter(LockEvent::mutex_handoff), 0u);
  ASSERT_TRUE(m.try_lock());  // and stolen again
  m.unlock();

  OsqHookEnv::hooks().hold_after_wake[kB] = false;
  ASSERT_TRUE(eventually([&] { return b.acquired.load(); }));
  b.finish();
  EXPECT_FALSE(m.is_locked());
}

TEST_F(MutexTest, CommonEraSetsHandoffOnlyOnAHeldLock) {
  // v5.15+: the same race leaves the free word alone; B's retry finds C owning the lock and
  // sets HANDOFF in its cmpxchg, so C's unlock hands the lock to B.
  OsqHookEnv::policies().handoff.mutex_trylock = MutexTrylock::common;
  constexpr int kA = 264, kB = 265, kC = 266;
  M m;
  Holder a, b, c;
  handoff_request_races_unlock(m, a, kA, b, kB);
  EXPECT_EQ(m.owner_word(), M::kWaiters);
  c.start(m, kC);
  ASSERT_TRUE(eventually([&] { return c.acquired.load(); }));

  OsqHookEnv::hooks().hold_in_prepare[kB] = false;
  ASSERT_TRUE(eventually([&] { return (m.owner_word() & M::kHandoff) != 0 && sleeping(kB); }));

  OsqHookEnv::hooks().hold_after_wake[kB] = true;
  c.finish();
  EXPECT_EQ(m.owner(), task_of(kB));
  EXPECT_NE(m.owner_word() & M::kPickup, 0u);
  EXPECT_EQ(counter(LockEvent::mutex_handoff), 1u);
  EXPECT_FALSE(m.try_lock());

  OsqHookEnv::hooks().hold_after_wake[kB] = false;
  ASSERT_TRUE(eventually([&] { return b.acquired.load(); }));
  b.finish();
  EXPECT_FALSE(m.is_locked());
}

class MutexPreemptedOwner : public MutexTest, public ::testing::WithParamInterface<int> {};

TEST_P(MutexPreemptedOwner, SpinnerStopsWhenOwnerVcpuIsPreempted) {
  OsqHookEnv::policies().owner_spin.preempt_check_period = static_cast<std::uint32_t>(GetParam());
  constexpr int kA = 241, kB = 242;
  M m;
  Holder a, b;
  a.start(m, kA);
  ASSERT_TRUE(eventually([&] { return a.acquired.load(); }));
  b.start(m, kB);
  // B owns the OSQ and spins on A.
  ASSERT_TRUE(eventually([&] { return m.osq_busy(); }));
  EXPECT_EQ(counter(LockEvent::mutex_opt_spin), 1u);

  OsqHookEnv::hooks().preempted[kA] = true;
  ASSERT_TRUE(eventually([&] { return sleeping(kB); }));
  EXPECT_EQ(counter(LockEvent::mutex_spin_preempted), 1u);
  EXPECT_EQ(counter(LockEvent::mutex_opt_fail), 1u);
  EXPECT_FALSE(m.osq_busy());

  a.finish();
  ASSERT_TRUE(eventually([&] { return b.acquired.load(); }));
  b.finish();
  EXPECT_FALSE(m.is_locked());
}

INSTANTIATE_TEST_SUITE_P(CheckPeriod, MutexPreemptedOwner, ::testing::Values(1, 256));

TEST_F(MutexTest, PeriodZeroNeverConsultsVcpuIsPreempted) {
  // Kernels before v4.9 (seed 003's "before" and "after" alike): the spinner keeps spinning
  // on an owner whose vCPU is preempted, until the owner releases the lock.
  OsqHookEnv::policies().owner_spin.preempt_check_period = 0;
  constexpr int kA = 251, kB = 252;
  M m;
  Holder a, b;
  a.start(m, kA);
  ASSERT_TRUE(eventually([&] { return a.acquired.load(); }));
  OsqHookEnv::hooks().preempted[kA] = true;
  b.start(m, kB);
  ASSERT_TRUE(eventually([&] { return m.osq_busy(); }));
  EXPECT_EQ(counter(LockEvent::mutex_opt_spin), 1u);
  EXPECT_FALSE(sleeping(kB));
  a.finish();
  ASSERT_TRUE(eventually([&] { return b.acquired.load(); }));
  EXPECT_EQ(counter(LockEvent::mutex_spin_preempted), 0u);
  EXPECT_EQ(counter(LockEvent::mutex_sleep), 0u);
  b.finish();
  EXPECT_FALSE(m.is_locked());
}

TEST_F(MutexTest, NoSpinningOnAnAlreadyPreemptedOwner) {
  constexpr int kA = 243, kB = 244;
  M m;
  Holder a, b;
  a.start(m, kA);
  ASSERT_TRUE(eventually([&] { return a.acquired.load(); }));
  OsqHookEnv::hooks().preempted[kA] = true;  // owner_on_cpu() is false: skip the OSQ entirely
  b.start(m, kB);
  ASSERT_TRUE(eventually([&] { return sleeping(kB); }));
  EXPECT_EQ(counter(LockEvent::mutex_opt_spin), 0u);
  EXPECT_EQ(counter(LockEvent::osq_lock), 0u);
  a.finish();
  ASSERT_TRUE(eventually([&] { return b.acquired.load(); }));
  b.finish();
}

TEST_F(MutexTest, SpinOnOwnerOffGoesStraightToSleep) {
  OsqHookEnv::policies().owner_spin.spin_on_owner = false;
  constexpr int kA = 245, kB = 246;
  M m;
  Holder a, b;
  a.start(m, kA);
  ASSERT_TRUE(eventually([&] { return a.acquired.load(); }));
  b.start(m, kB);
  ASSERT_TRUE(eventually([&] { return sleeping(kB); }));
  a.finish();
  ASSERT_TRUE(eventually([&] { return b.acquired.load(); }));
  b.finish();
  EXPECT_EQ(counter(LockEvent::mutex_opt_spin), 0u);
  EXPECT_GE(counter(LockEvent::mutex_sleep), 1u);
}

// ---- torture: real threads, NativeEnv -------------------------------------------------

int cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

native::TortureResult torture(int threads, bool spin = true) {
  native::TortureOptions o;
  o.lock = "mutex";
  o.threads = threads;
  o.duration_s = 0.3;
  o.hold_ns = 200;
  o.policies.owner_spin.spin_on_owner = spin;
  return native::run_torture(o);
}

class MutexTorture : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(MutexTorture, ExcludesAndServesEveryThread) {
  const auto [per_core, spin] = GetParam();
  const native::TortureResult r = torture(per_core * cores(), spin);
  EXPECT_EQ(r.violations, 0u);
  EXPECT_FALSE(r.stuck);
  // Every thread got the lock: sleepers are woken FIFO and a woken first waiter cannot be
  // overtaken more than once (HANDOFF).
  EXPECT_GT(r.min_per_thread, 0u);
  const LockEventCounts& c = r.counters;
  EXPECT_EQ(c[LockEvent::mutex_opt_spin],
            c[LockEvent::mutex_opt_lock] + c[LockEvent::mutex_opt_fail]);
  if (!spin) {
    EXPECT_EQ(c[LockEvent::mutex_opt_spin], 0u);
  }
  if (spin && per_core == 4) {
    // Over-subscribed: spinners run out of slice (native need_resched) and sleep.
    EXPECT_GT(c[LockEvent::mutex_opt_spin], 0u);
    EXPECT_GT(c[LockEvent::mutex_sleep], 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(ThreadsPerCore, MutexTorture,
                         ::testing::Combine(::testing::Values(1, 2, 4), ::testing::Bool()),
                         [](const auto& info) {
                           return "x" + std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_spin" : "_nospin");
                         });

}  // namespace
}  // namespace pvlock
