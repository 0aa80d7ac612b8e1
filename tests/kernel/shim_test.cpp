// SPDX-License-Identifier: GPL-2.0-only
// The kernel shim's primitives (through C compiled against the shim, shim_probe.c): the
// access families return and store what the kernel's definitions do, condition waits
// spin through cpu_relax() exactly as written, per-CPU variables are per CPU and per kernel
// instance, lock events reach the Environment's counters.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "kernel/shim_probe.h"
#include "pvlock/env/native.hpp"
#include "pvlock/kernel/ops.hpp"

namespace pvlock::kernel {
namespace {

// NativeEnv with its own kernel instance, counting cpu_relax() calls and lock events.
struct CountingEnv : NativeEnv {
  static inline std::atomic<long> relaxes{0};
  static inline std::array<std::atomic<std::uint64_t>, kLockEventCount> events{};
  static void cpu_relax() {
    relaxes.fetch_add(1, std::memory_order_relaxed);
    NativeEnv::cpu_relax();
  }
  // The PAUSEs of iterations the spin replay waits out (spin_replay.hpp) count as well.
  template <class Cond, class Check>
  static SpinResult spin_until(SpinSite site, Cond&& cond, SpinBudget& budget, std::uint32_t period,
                               Check&& check) {
    const std::uint64_t before = budget.iters;
    const SpinResult r = NativeEnv::spin_until(site, cond, budget, period, check);
    relaxes.fetch_add(static_cast<long>(before - budget.iters), std::memory_order_relaxed);
    return r;
  }
  static void count(LockEvent e, std::uint64_t n = 1) {
    events[static_cast<std::size_t>(e)].fetch_add(n, std::memory_order_relaxed);
  }
  template <class T>
  static T& global() {
    static T object{};
    return object;
  }
};
static_assert(Environment<CountingEnv>);

class Shim : public ::testing::Test {
 protected:
  void SetUp() override {
    Ops<CountingEnv>::enter();
    CountingEnv::relaxes = 0;
  }
};

TEST_F(Shim, CmpxchgReturnsTheValueFoundAndStoresOnlyOnAMatch) {
  std::uint8_t b = 1;
  EXPECT_EQ(probe_cmpxchg_u8(&b, 0, 7), 1);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(probe_cmpxchg_u8(&b, 1, 7), 1);
  EXPECT_EQ(b, 7);
}

TEST_F(Shim, SubwordAccessesLeaveTheRestOfTheWord) {
  // x86 qspinlock: locked byte, pending byte, 16-bit tail of one u32.
  alignas(4) std::uint32_t word = 0x12340001;
  auto* bytes = reinterpret_cast<std::uint8_t*>(&word);
  auto* tail = reinterpret_cast<std::uint16_t*>(bytes + 2);
  EXPECT_EQ(probe_cmpxchg_u8(bytes + 1, 0, 1), 0);  // set pending
  EXPECT_EQ(word, 0x12340101u);
  EXPECT_EQ(probe_xchg_relaxed_u16(tail, 0xbeef), 0x1234);
  EXPECT_EQ(word, 0xbeef0101u);
}

TEST_F(Shim, TryCmpxchgUpdatesTheExpectedValueOnFailure) {
  int v = 5;
  int old = 4;
  EXPECT_FALSE(probe_try_cmpxchg_acquire(&v, &old, 9));
  EXPECT_EQ(old, 5);
  EXPECT_EQ(v, 5);
  EXPECT_TRUE(probe_try_cmpxchg_acquire(&v, &old, 9));
  EXPECT_EQ(v, 9);

  int a = 0, b = 0;
  void* p = &a;
  void* expected = &b;
  EXPECT_FALSE(probe_try_cmpxchg_ptr(&p, &expected, nullptr));
  EXPECT_EQ(expected, &a);
  EXPECT_TRUE(probe_try_cmpxchg_ptr(&p, &expected, &b));
  EXPECT_EQ(p, &b);
  EXPECT_EQ(probe_cmpxchg_release_ptr(&p, &b, nullptr), &b);
  EXPECT_EQ(p, nullptr);
}

TEST_F(Shim, AtomicArithmeticMatchesTheKernelDefinitions) {
  int c = 0x1;
  EXPECT_EQ(probe_atomic_fetch_or_acquire(&c, 0x100), 0x1);
  EXPECT_EQ(c, 0x101);
  probe_atomic_andnot(&c, 0x100);
  EXPECT_EQ(c, 0x1);
  probe_atomic_add(&c, -0x100 + 0x1);  // clear_pending_set_locked()'s shape
  EXPECT_EQ(c, -0xfe);
  EXPECT_EQ(probe_atomic_xchg(&c, 3), -0xfe);
  EXPECT_EQ(c, 3);
}

TEST_F(Shim, PlainAccessesKeepTheFullWidth) {
  const std::uint64_t big = 0xfedcba9876543210ull;
  EXPECT_EQ(probe_read_once_u64(&big), big);
  int x = 0;
  void* p = nullptr;
  probe_write_once_ptr(&p, &x);
  EXPECT_EQ(p, &x);
  int w = 0;
  probe_smp_store_release(&w, -2);
  EXPECT_EQ(probe_smp_load_acquire(&w), -2);
  std::uint8_t s = 0;
  EXPECT_EQ(probe_smp_store_mb(&s, 2), 2);
}

TEST_F(Shim, CondLoadWaitsForTheConditionThroughCpuRelax) {
  alignas(4) int flag = 0;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    __atomic_store_n(&flag, 42, __ATOMIC_RELEASE);
  });
  EXPECT_EQ(probe_cond_load_nonzero(&flag), 42);
  setter.join();
  EXPECT_GT(CountingEnv::relaxes.load(), 0);
}

TEST_F(Shim, BoundedCondLoadSpinsExactlyItsBudget) {
  // The pending loop: the word never changes, so the loop ends when its counter does.
  const int word = 0x100;
  EXPECT_EQ(probe_cond_load_bounded(&word, 0x100, 512), 0x100);
  EXPECT_EQ(CountingEnv::relaxes.load(), 512);
  CountingEnv::relaxes = 0;
  const int other = 0x1;
  EXPECT_EQ(probe_cond_load_bounded(&other, 0x100, 512), 0x1);
  EXPECT_EQ(CountingEnv::relaxes.load(), 0);
}

TEST_F(Shim, PerCpuVariablesArePerCpuAndPerKernelInstance) {
  int* mine = probe_this_cpu_int();
  EXPECT_EQ(mine, probe_per_cpu_int(CountingEnv::cpu()));
  int* c0 = probe_per_cpu_int(0);
  int* c1 = probe_per_cpu_int(1);
  EXPECT_NE(c0, c1);
  EXPECT_EQ(reinterpret_cast<char*>(c1) - reinterpret_cast<char*>(c0),
            static_cast<std::ptrdiff_t>(Ops<CountingEnv>::vm()->percpu_stride));
  const int before = *mine;
  probe_this_cpu_add(3);
  EXPECT_EQ(*mine, before + 3);

  // Another kernel instance (NativeEnv's) has its own copies.
  Ops<NativeEnv>::enter();
  int* native0 = probe_per_cpu_int(0);
  EXPECT_NE(native0, c0);
  EXPECT_NE(Ops<NativeEnv>::vm(), Ops<CountingEnv>::vm());
}

TEST_F(Shim, LockEventsReachTheEnvironmentCounters) {
  auto get = [](LockEvent e) { return CountingEnv::events[static_cast<std::size_t>(e)].load(); };
  const auto pending = get(LockEvent::lock_pending);
  const auto hops = get(LockEvent::pv_hash_hops);
  probe_lockevent_pending();
  probe_lockevent_hops(5);
  EXPECT_EQ(get(LockEvent::lock_pending), pending + 1);
  EXPECT_EQ(get(LockEvent::pv_hash_hops), hops + 5);
}

TEST_F(Shim, EveryKernelLockEventHasAPvlockCounter) {
  const auto& map = event_map();
  ASSERT_EQ(static_cast<int>(map.size()), pvk_lock_event_count());
  for (int k = 0; k < pvk_lock_event_count(); ++k)
    EXPECT_GE(map[static_cast<std::size_t>(k)], 0) << pvk_lock_event_name(k);
}

TEST_F(Shim, WarnReturnsItsCondition) {
  EXPECT_EQ(probe_warn(0), 0);
  EXPECT_NE(probe_warn(1), 0);
}

}  // namespace
}  // namespace pvlock::kernel
