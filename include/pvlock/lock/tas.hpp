// SPDX-License-Identifier: GPL-2.0-only
// Test-and-test-and-set spinlock: the kernel's virt_spin_lock()
// (arch/x86/include/asm/qspinlock.h). A guest whose host offers no PV unhalt keeps
// virt_spin_lock_key on and every contended qspinlock becomes this: unfair, no queue, so a
// preempted waiter never blocks a free lock, at the price of every release being a
// stampede of cmpxchg attempts on one cache line (seed 002 measures that price).
#pragma once

#include <cstdint>
#include <limits>

#include "pvlock/env/environment.hpp"

namespace pvlock {

template <Environment Env>
class TasLock {
 public:
  static constexpr const char* kName = "tas";

  void lock() {
    Env::preempt_disable();
    std::uint32_t expected = 0;
    if (val_.compare_exchange(expected, 1, std::memory_order_acquire)) return;
    Env::count(LockEvent::virt_spin_lock);
    slowpath();
  }
  bool try_lock() {
    Env::preempt_disable();
    std::uint32_t expected = 0;
    if (val_.load(std::memory_order_relaxed) == 0 &&
        val_.compare_exchange(expected, 1, std::memory_order_acquire))
      return true;
    Env::preempt_enable();
    return false;
  }
  void unlock() {
    val_.store(0, std::memory_order_release);
    Env::preempt_enable();
  }
  bool is_locked() const { return val_.load(std::memory_order_relaxed) != 0; }

  // The body of virt_spin_lock(): read until free, then one cmpxchg; repeat on failure.
  // Shared with qspinlock's virt_spin_lock_key path, which spins on the whole 32-bit word.
  static void spin_acquire(typename Env::template atomic<std::uint32_t>& word) {
    for (;;) {
      SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
      Env::spin_until(
          SpinSite::tas_spin, [&] { return word.load(std::memory_order_relaxed) == 0; }, forever, 0,
          [] { return false; });
      std::uint32_t expected = 0;
      if (word.compare_exchange(expected, 1, std::memory_order_acquire)) return;
    }
  }

 private:
  void slowpath() { spin_acquire(val_); }

  typename Env::template atomic<std::uint32_t> val_{};
};

}  // namespace pvlock
