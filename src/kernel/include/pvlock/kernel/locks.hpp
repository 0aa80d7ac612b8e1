// SPDX-License-Identifier: GPL-2.0-only
// The kernel:* locks: the kernel's own kernel/locking code (built from the tree named at
// configure time, see src/kernel/CMakeLists.txt) behind pvlock's lock interface, for any
// Env. Included by pvlock/lock/registry.hpp when the kernel locks are built.
#pragma once

#include <cstdint>
#include <tuple>

#include "pvlock/env/environment.hpp"
#include "pvlock/kernel/abi.h"
#include "pvlock/kernel/ops.hpp"
#include "pvlock/kernel/variants.hpp"

#ifndef PVLOCK_KERNEL_VERSION
#define PVLOCK_KERNEL_VERSION "?"
#endif

namespace pvlock::kernel {

inline constexpr const char* kVersion = PVLOCK_KERNEL_VERSION;

// spin_lock()/spin_unlock() of an x86-64 guest: preemption off, then the generic fast path
// and the kernel's native_queued_spin_lock_slowpath() or, with PV, its
// __pv_queued_spin_lock_slowpath() / __pv_queued_spin_unlock(), of build B (variants.hpp).
template <Environment Env, bool PV, class B = Stock>
class Qspinlock {
 public:
  static constexpr const char* kName = PV ? B::kPvqspinlock : B::kQspinlock;

  void lock() {
    Env::preempt_disable();
    Ops<Env, B>::enter();
    if constexpr (PV) {
      B::pv_lock(&word_);
    } else {
      B::native_lock(&word_);
    }
  }
  bool try_lock() {
    Env::preempt_disable();
    Ops<Env, B>::enter();
    if (B::trylock(&word_) != 0) return true;
    Env::preempt_enable();
    return false;
  }
  void unlock() {
    Ops<Env, B>::enter();
    if constexpr (PV) {
      B::pv_unlock(&word_);
    } else {
      B::native_unlock(&word_);
    }
    Env::preempt_enable();
  }
  std::uint32_t value() const { return word_.load(std::memory_order_relaxed); }
  // queued_spin_is_locked(): any of locked, pending or tail set.
  bool is_locked() const { return value() != 0; }

 private:
  typename Env::template atomic<std::uint32_t> word_{};  // struct qspinlock
};

// The kernel's OSQ (osq_lock.c) used as a spinlock: osq_lock() gives up when need_resched()
// or the predecessor's vCPU is preempted, and the lock then simply queues again (the kernel's
// mutex and rwsem would go to their sleep path instead).
template <Environment Env, class B = Stock>
class Osq {
 public:
  static constexpr const char* kName = B::kOsq;

  void lock() {
    Env::preempt_disable();
    Ops<Env, B>::enter();
    while (B::osq_lock(&tail_) == 0) {
      Env::preempt_enable();
      Env::cpu_relax();
      Env::preempt_disable();
      Ops<Env, B>::enter();
    }
  }
  void unlock() {
    Ops<Env, B>::enter();
    B::osq_unlock(&tail_);
    Env::preempt_enable();
  }

 private:
  typename Env::template atomic<std::uint32_t> tail_{};  // struct optimistic_spin_queue
};

}  // namespace pvlock::kernel

namespace pvlock {

// Calls f.template operator()<LockType>(LockInfo) for each kernel:* lock (see registry.hpp):
// the three locks of the stock build, then those of every variant.
template <Environment Env, class F>
void for_each_kernel_lock(F&& f) {
  auto build = [&]<class B>() {
    f.template operator()<kernel::Qspinlock<Env, false, B>>(LockInfo{
        B::kQspinlock,
        LockKind::spin,
        kernel::is_stock<B> ? "the kernel's kernel/locking/qspinlock.c, unmodified: "
                              "native_queued_spin_lock_slowpath()"
                            : "the kernel's kernel/locking/qspinlock.c with the variant's change: "
                              "native_queued_spin_lock_slowpath()",
        {},
        false,
        kernel::kVersion,
        B::kChange});
    f.template operator()<kernel::Qspinlock<Env, true, B>>(LockInfo{
        B::kPvqspinlock,
        LockKind::spin,
        kernel::is_stock<B> ? "the kernel's qspinlock.c + qspinlock_paravirt.h, unmodified: "
                              "__pv_queued_spin_lock_slowpath()"
                            : "the kernel's qspinlock.c + qspinlock_paravirt.h with the variant's "
                              "change: __pv_queued_spin_lock_slowpath()",
        {},
        false,
        kernel::kVersion,
        B::kChange});
    f.template operator()<kernel::Osq<Env, B>>(
        LockInfo{B::kOsq,
                 LockKind::spin,
                 kernel::is_stock<B>
                     ? "the kernel's kernel/locking/osq_lock.c, unmodified, as a spinlock "
                       "(re-queues when osq_lock() gives up)"
                     : "the kernel's kernel/locking/osq_lock.c with the variant's change, as a "
                       "spinlock (re-queues when osq_lock() gives up)",
                 {},
                 false,
                 kernel::kVersion,
                 B::kChange});
  };
  [&]<class... Bs>(std::tuple<Bs...>*) {
    (build.template operator()<Bs>(), ...);
  }(static_cast<kernel::Builds*>(nullptr));
}

}  // namespace pvlock
