// SPDX-License-Identifier: GPL-2.0-only
// RawSpinlock on real threads: every kind it can hold excludes, the kind is the one the
// kernel's policies name when the lock is built (later changes do not move a built lock),
// the _irq/_irqsave forms disable and restore interrupts around the lock, and the mutex and
// rwsem wait_lock is one of them. (The simulated world: tests/workload/wait_lock_test.cpp.)
#include "pvlock/lock/raw_spinlock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/knobs.hpp"
#include "pvlock/lock/mutex.hpp"
#include "pvlock/lock/rwsem.hpp"

namespace pvlock {
namespace {

// Polls `cond` (yielding) until it holds; false after a generous safety limit, so a broken
// lock fails the test instead of hanging it. Never used to assert a duration.
bool testing_eventually(const std::function<bool()>& cond) {
  for (int i = 0; i < 200'000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return cond();
}

constexpr RawSpinlockKind kKinds[] = {RawSpinlockKind::tas, RawSpinlockKind::ticket,
                                      RawSpinlockKind::mcs, RawSpinlockKind::qspinlock,
                                      RawSpinlockKind::pvqspinlock};

// Sets NativeEnv's raw_spinlock policy for one test and puts the old one back.
class PolicyScope {
 public:
  explicit PolicyScope(RawSpinlockKind k) : saved_(NativeEnv::policies().raw_spinlock) {
    NativeEnv::policies().raw_spinlock = k;
  }
  ~PolicyScope() { NativeEnv::policies().raw_spinlock = saved_; }

 private:
  RawSpinlockKind saved_;
};

class RawSpinlockTest : public ::testing::TestWithParam<RawSpinlockKind> {};

TEST_P(RawSpinlockTest, HoldsTheKindThePoliciesNameAtConstruction) {
  RawSpinlockKind built{};
  {
    PolicyScope p(GetParam());
    RawSpinlock<NativeEnv> l;
    built = l.kind();
    // A kernel picks its spinlock once: a later policy change leaves a built lock alone.
    NativeEnv::policies().raw_spinlock =
        GetParam() == RawSpinlockKind::tas ? RawSpinlockKind::mcs : RawSpinlockKind::tas;
    EXPECT_EQ(l.kind(), GetParam());
  }
  EXPECT_EQ(built, GetParam());
  RawSpinlock<NativeEnv> explicit_kind(GetParam());
  EXPECT_EQ(explicit_kind.kind(), GetParam());
}

// Unresolved (auto, the default), a kernel's spinlock is its world's boot choice. Native
// threads are preemptible CPUs that can halt and be kicked, a PV_UNHALT guest: the PV
// qspinlock, so that a mutex's wait_lock does not hand itself to a descheduled thread.
TEST(RawSpinlockDefault, AutoIsThePvQspinlockOnNativeThreads) {
  EXPECT_EQ(LockPolicies{}.raw_spinlock, RawSpinlockKind::automatic);
  EXPECT_EQ(RawSpinlock<NativeEnv>(RawSpinlockKind::automatic).kind(),
            RawSpinlockKind::pvqspinlock);
  PolicyScope p(RawSpinlockKind::automatic);
  Mutex<NativeEnv> m;
  EXPECT_EQ(m.wait_lock().kind(), RawSpinlockKind::pvqspinlock);
  RwSem<NativeEnv> s;
  EXPECT_EQ(s.wait_lock().kind(), RawSpinlockKind::pvqspinlock);
}

// A world without a boot choice of its own is bare metal: the native qspinlock.
struct MetalEnv : NativeEnv {
  static RawSpinlockKind boot_raw_spinlock() = delete;
};

TEST(RawSpinlockDefault, AutoIsTheNativeQspinlockWithoutABootChoice) {
  static_assert(Environment<MetalEnv>);
  EXPECT_EQ(env_boot_raw_spinlock<MetalEnv>(), RawSpinlockKind::qspinlock);
  EXPECT_EQ(RawSpinlock<MetalEnv>(RawSpinlockKind::automatic).kind(), RawSpinlockKind::qspinlock);
}

TEST_P(RawSpinlockTest, TryLockFailsWhileHeld) {
  RawSpinlock<NativeEnv> l(GetParam());
  EXPECT_FALSE(l.is_locked());
  l.lock();
  EXPECT_TRUE(l.is_locked());
  std::thread([&] { EXPECT_FALSE(l.try_lock()); }).join();
  l.unlock();
  EXPECT_FALSE(l.is_locked());
  ASSERT_TRUE(l.try_lock());
  l.unlock();
}

TEST_P(RawSpinlockTest, ExcludesUnderOversubscription) {
  RawSpinlock<NativeEnv> l(GetParam());
  long counter = 0;  // plain: a race here is a lock bug (and a TSan report)
  constexpr int kThreads = 6;
  std::atomic<bool> stop{false};
  std::atomic<long> done{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      long mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        // Every form of acquisition, so that each is exercised under contention.
        if (t % 3 == 0) {
          std::lock_guard g(l);
          ++counter;
        } else if (t % 3 == 1) {
          l.lock_irq();
          ++counter;
          l.unlock_irq();
        } else {
          const IrqFlags f = l.lock_irqsave();
          ++counter;
          l.unlock_irqrestore(f);
        }
        ++mine;
      }
      done.fetch_add(mine);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop.store(true);
  for (auto& th : ts) th.join();
  EXPECT_GT(counter, 0);
  EXPECT_EQ(counter, done.load());
}

TEST_P(RawSpinlockTest, MutexAndRwsemWaitLockFollowThePolicy) {
  PolicyScope p(GetParam());
  Mutex<NativeEnv> m;
  RwSem<NativeEnv> r;
  EXPECT_EQ(m.wait_lock().kind(), GetParam());
  EXPECT_EQ(r.wait_lock().kind(), GetParam());
  // A contended mutex goes through its wait_lock: still exclusive, whatever guards it.
  long counter = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::lock_guard g(m);
        ++counter;
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(counter, 4 * 2000);
}

INSTANTIATE_TEST_SUITE_P(Kinds, RawSpinlockTest, ::testing::ValuesIn(kKinds), [](const auto& info) {
  return std::string(raw_spinlock_kind_name(info.param));
});

// An Env that records what the IRQ calls did, to check their order around the lock. The
// IRQ state is per thread (per CPU); the counts are for the whole test.
struct IrqEnv : NativeEnv {
  static inline thread_local bool off = false;
  static inline thread_local bool off_at_lock = false;
  static inline std::atomic<int> disables{0};
  static inline std::atomic<int> enables{0};
  static void irq_disable() {
    off = true;
    ++disables;
  }
  static void irq_enable() {
    off = false;
    ++enables;
  }
  static bool irqs_disabled() { return off; }
  static void preempt_disable() { off_at_lock = off; }
};
static_assert(Environment<IrqEnv>);

TEST(RawSpinlockIrq, IrqFormsDisableBeforeTheLockAndRestoreAfter) {
  RawSpinlock<IrqEnv> l(RawSpinlockKind::qspinlock);
  l.lock_irq();
  EXPECT_TRUE(IrqEnv::off_at_lock);  // raw_spin_lock_irq: local_irq_disable() first
  l.unlock_irq();
  EXPECT_FALSE(IrqEnv::off);

  // irqsave with IRQs on: restored on; with IRQs already off: left off.
  IrqFlags f = l.lock_irqsave();
  EXPECT_TRUE(IrqEnv::off);
  l.unlock_irqrestore(f);
  EXPECT_FALSE(IrqEnv::off);
  IrqEnv::irq_disable();
  const int enables = IrqEnv::enables;
  f = l.lock_irqsave();
  l.unlock_irqrestore(f);
  EXPECT_TRUE(IrqEnv::off);
  EXPECT_EQ(IrqEnv::enables, enables);
  IrqEnv::irq_enable();

  // The plain forms leave interrupts alone (the mutex takes its wait_lock so).
  const int disables = IrqEnv::disables;
  l.lock();
  EXPECT_FALSE(IrqEnv::off_at_lock);
  l.unlock();
  EXPECT_EQ(IrqEnv::disables, disables);
}

// v6.1: the mutex takes wait_lock with raw_spin_lock (IRQs untouched); the rwsem's slow
// paths with raw_spin_lock_irq and rwsem_wake with raw_spin_lock_irqsave.
TEST(RawSpinlockIrq, RwsemTakesItsWaitLockWithIrqsOffTheMutexDoesNot) {
  PolicyScope p(RawSpinlockKind::qspinlock);
  // No optimistic spinning: the second locker goes straight to the wait list.
  const bool spin = NativeEnv::policies().owner_spin.spin_on_owner;
  NativeEnv::policies().owner_spin.spin_on_owner = false;
  {
    Mutex<IrqEnv> m;
    const int before = IrqEnv::disables;
    m.lock();
    std::thread waiter([&] {
      m.lock();  // sleeps: slow path, wait_lock taken and dropped
      m.unlock();
    });
    ASSERT_TRUE(
        testing_eventually([&] { return (m.owner_word() & Mutex<IrqEnv>::kWaiters) != 0; }));
    m.unlock();  // wakes it: the unlock slow path takes wait_lock too
    waiter.join();
    EXPECT_EQ(IrqEnv::disables, before);
  }
  {
    RwSem<IrqEnv> r;
    const int before = IrqEnv::disables;
    const int enabled_before = IrqEnv::enables;
    r.lock();
    std::thread reader([&] {
      r.lock_shared();            // queues behind the writer: wait_lock with IRQs off
      EXPECT_FALSE(IrqEnv::off);  // and on again once the reader has the lock
      r.unlock_shared();
    });
    ASSERT_TRUE(testing_eventually([&] { return IrqEnv::disables.load() > before; }));
    r.unlock();  // rwsem_wake: irqsave
    reader.join();
    EXPECT_GE(IrqEnv::disables - before, 2);
    EXPECT_EQ(IrqEnv::disables - before, IrqEnv::enables - enabled_before);
    EXPECT_FALSE(IrqEnv::off);
  }
  NativeEnv::policies().owner_spin.spin_on_owner = spin;
}

TEST(RawSpinlockKnob, WaitLockKnobNamesEveryKind) {
  // The knob's own setter, as the scenario reader calls it (apply_knob_assignment() inlined
  // here trips GCC 12's -Wrestrict false positive, PR 105329).
  const Knob* knob = find_knob("wait_lock");
  ASSERT_NE(knob, nullptr);
  for (const RawSpinlockKind k : kKinds) {
    LockPolicies p;
    ASSERT_EQ(knob->set(p, raw_spinlock_kind_name(k)), std::nullopt);
    EXPECT_EQ(p.raw_spinlock, k);
    EXPECT_EQ(knob->get(p), raw_spinlock_kind_name(k));
  }
  LockPolicies p;
  const auto err = knob->set(p, "spin");
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("pvqspinlock"), std::string::npos);
}

}  // namespace
}  // namespace pvlock
