// SPDX-License-Identifier: GPL-2.0-only
// struct mutex (kernel/locking/mutex.c): a sleeping lock whose contenders first spin
// optimistically while the owner is running, and sleep on a FIFO wait list otherwise.
//
// The owner word holds the owning task pointer with three flags in its low bits:
//   WAITERS (1)  the wait list is non-empty: unlock must take the slow path and wake someone;
//   HANDOFF (2)  the first waiter was woken and still lost the race: unlock must hand the
//                lock to it instead of releasing it;
//   PICKUP  (4)  the hand-off is done: the word names the new owner, who has yet to notice.
// Spinning is what makes a mutex fast and what makes it unfair: a running spinner beats a
// sleeper that has to be woken. HANDOFF bounds that unfairness: once the first waiter has
// been woken and failed, the very next unlock is its.
//
// Two eras of how the waiter raises HANDOFF (policies().handoff.mutex_trylock): from v5.15
// (__mutex_trylock_common) each retry takes the lock or sets the flag in one cmpxchg; in
// v4.10-5.14 (__mutex_trylock_or_owner) the waiter ORs the flag in once, after its first
// wake-up as first waiter and before it retries, so the flag may land on a lock that was
// just released, where any trylock takes the lock and drops the flag -- and the waiter
// never raises it again.
//
// Optimistic spinning (CONFIG_MUTEX_SPIN_ON_OWNER) happens only while the owner is on a CPU
// and, in a guest, its vCPU is not preempted (owner_on_cpu); spinners queue on an OSQ first
// so that a single one polls the owner word. In a guest, spinning on a preempted owner is
// exactly the waste vcpu_is_preempted() exists to avoid; how often the spinner consults it
// is the knob of seed 004 (policies().owner_spin.preempt_check_period).
//
// wait_lock, the raw_spinlock_t guarding the wait list, is the kernel's spinlock
// (raw_spinlock.hpp), taken with IRQs on as v6.1 does (raw_spin_lock).
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <limits>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/mutex_wait_list.hpp"
#include "pvlock/lock/osq.hpp"
#include "pvlock/lock/raw_spinlock.hpp"

namespace pvlock {

template <Environment Env>
class Mutex {
 public:
  using Task = typename Env::task;
  static constexpr const char* kName = "mutex";

  static constexpr std::uintptr_t kWaiters = 0x1;  // MUTEX_FLAG_WAITERS
  static constexpr std::uintptr_t kHandoff = 0x2;  // MUTEX_FLAG_HANDOFF
  static constexpr std::uintptr_t kPickup = 0x4;   // MUTEX_FLAG_PICKUP
  static constexpr std::uintptr_t kFlags = 0x7;

  // mutex_lock()
  void lock() {
    if (trylock_fast()) {
      Env::count(LockEvent::mutex_fastpath);
      return;
    }
    lock_slowpath();
  }

  // mutex_trylock(): works on any unlocked state (including one with waiters queued).
  bool try_lock() { return trylock_common(false) == nullptr; }

  // mutex_unlock()
  void unlock() {
    std::uintptr_t expected = to_word(Env::current());
    if (owner_.compare_exchange(expected, 0, std::memory_order_release)) return;
    unlock_slowpath();
  }

  bool is_locked() const { return owner_task(owner_.load(std::memory_order_relaxed)) != nullptr; }
  // For tests and tools: the owning task (nullptr if free) and the raw owner word.
  Task* owner() const { return owner_task(owner_.load(std::memory_order_relaxed)); }
  std::uintptr_t owner_word() const { return owner_.load(std::memory_order_relaxed); }
  bool osq_busy() const { return osq_.is_locked(); }
  // The wait_lock itself (its kind; a lock_stat row of its own).
  RawSpinlock<Env>& wait_lock() { return wait_lock_; }
  const RawSpinlock<Env>& wait_lock() const { return wait_lock_; }

 private:
  // struct mutex_waiter, on the sleeping task's stack.
  struct Waiter {
    Waiter* next = nullptr;
    Waiter* prev = nullptr;
    Task* task = nullptr;
  };

  static std::uintptr_t to_word(Task* t) {
    const auto w = reinterpret_cast<std::uintptr_t>(t);
    assert((w & kFlags) == 0 && "task pointers must leave the flag bits free");
    return w;
  }
  static Task* owner_task(std::uintptr_t owner) { return reinterpret_cast<Task*>(owner & ~kFlags); }

  // __mutex_trylock_fast(): the uncontended 0 -> current cmpxchg.
  bool trylock_fast() {
    std::uintptr_t zero = 0;
    return owner_.compare_exchange(zero, to_word(Env::current()), std::memory_order_acquire);
  }

  static bool or_owner_era() {
    return Env::policies().handoff.mutex_trylock == MutexTrylock::or_owner;
  }

  // __mutex_trylock_common(): take the lock if it is free or was handed to us (PICKUP);
  // with `handoff`, otherwise ask the owner for a hand-off by setting HANDOFF. Returns
  // nullptr on success, else the owning task. In the or_owner era (`handoff` is then always
  // false) the same test, __mutex_trylock_or_owner(), except that a free lock may carry a
  // stray HANDOFF, which taking the lock clears.
  Task* trylock_common(bool handoff) {
    const std::uintptr_t curr = to_word(Env::current());
    std::uintptr_t owner = owner_.load(std::memory_order_relaxed);
    for (;;) {  // loops only when racing against a flag update
      std::uintptr_t flags = owner & kFlags;
      std::uintptr_t task = owner & ~kFlags;
      if (task != 0) {
        if ((flags & kPickup) != 0) {
          if (task != curr) break;  // handed to someone else
          flags &= ~kPickup;
        } else if (handoff) {
          if ((flags & kHandoff) != 0) break;
          flags |= kHandoff;
        } else {
          break;
        }
      } else {
        // PICKUP never survives on a free lock: unlock hands over instead of clearing. Nor
        // does HANDOFF since v5.15; before, the waiter's separate OR could put it there.
        assert((flags & kPickup) == 0);
        assert(or_owner_era() || (flags & kHandoff) == 0);
        task = curr;
      }
      if (task == curr) flags &= ~kHandoff;  // or_owner: ours now, the request is moot
      if (owner_.compare_exchange(owner, task | flags, std::memory_order_acquire)) {
        if (task == curr) return nullptr;
        break;  // HANDOFF set; the owner is unchanged
      }
    }
    return owner_task(owner);
  }

  // __mutex_lock_common() for TASK_UNINTERRUPTIBLE, without ww_mutex.
  void lock_slowpath() {
    Env::preempt_disable();
    if (try_lock() || optimistic_spin(nullptr)) {
      Env::preempt_enable();
      return;
    }

    wait_lock_.lock();
    // Another try now that we waited for wait_lock: unlock may have happened meanwhile.
    if (try_lock()) {
      wait_lock_.unlock();
      Env::preempt_enable();
      return;
    }

    Waiter waiter;
    waiter.task = Env::current();
    add_waiter(&waiter);
    Env::prepare_block();    // set_current_state(TASK_UNINTERRUPTIBLE)
    bool was_first = false;  // or_owner era: `first` is only ever computed until it is true
    for (;;) {
      // Under wait_lock we are serialised against unlock's hand-off: pick it up here.
      if (try_lock()) break;
      wait_lock_.unlock();
      schedule_preempt_disabled();

      // Before 9d659ae14b54 (v4.10) a woken waiter only re-tried and slept again: running
      // spinners could beat it indefinitely (policies().handoff.mutex = false).
      bool first = false;
      bool ask_in_trylock = false;
      if (Env::policies().handoff.mutex) {
        if (!or_owner_era()) {
          first = waiters_.is_first(&waiter);
          ask_in_trylock = first;  // __mutex_trylock_or_handoff()
        } else if (!was_first && (was_first = waiters_.is_first(&waiter))) {
          // Raised once, whatever the word holds: the lock may be free by now.
          owner_.fetch_or(kHandoff, std::memory_order_relaxed);
        }
        if (or_owner_era()) first = was_first;
      }
      Env::prepare_block();
      // The first waiter that still loses has HANDOFF set, then spins on the owner without
      // the OSQ (it is the designated next owner anyway).
      if (trylock_common(ask_in_trylock) == nullptr || (first && optimistic_spin(&waiter))) {
        wait_lock_.lock();
        break;
      }
      wait_lock_.lock();
    }
    // Upstream now does __set_current_state(TASK_RUNNING). The Env has no such store; the
    // stale state is harmless: every block() follows a fresh prepare_block(), and a late
    // wake-up at worst makes a later block() return early into a loop that re-checks.
    remove_waiter(&waiter);
    wait_lock_.unlock();
    Env::preempt_enable();
  }

  // schedule_preempt_disabled(): sleep with the preemption count dropped for the switch.
  static void schedule_preempt_disabled() {
    Env::count(LockEvent::mutex_sleep);
    Env::preempt_enable();
    Env::block();
    Env::preempt_disable();
  }

  // __mutex_add_waiter(): FIFO; the first waiter raises WAITERS so unlock takes the slow path.
  void add_waiter(Waiter* w) {
    waiters_.push_back(w);
    if (waiters_.is_first(w)) owner_.fetch_or(kWaiters, std::memory_order_relaxed);
  }
  // __mutex_remove_waiter(): with the list empty, no flag has a reason to stay.
  void remove_waiter(Waiter* w) {
    waiters_.remove(w);
    if (waiters_.empty()) owner_.fetch_and(~kFlags, std::memory_order_relaxed);
  }

  // mutex_can_spin_on_owner(): is spinning worth the OSQ's cost at all?
  bool can_spin_on_owner() const {
    if (Env::need_resched()) return false;
    Task* owner = owner_task(owner_.load(std::memory_order_relaxed));
    // No owner: it was just released, and trying in the spin path beats sleeping.
    return owner == nullptr || owner_on_cpu<Env>(owner);
  }

  // mutex_spin_on_owner(): spin while `owner` holds the lock and keeps running. True if the
  // owner changed (worth a trylock), false if spinning should stop.
  bool spin_on_owner(Task* owner) {
    enum class Why { none, owner_changed, stop } why = Why::none;
    bool preempted = false;
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    const SpinResult r = Env::spin_until(
        SpinSite::mutex_spin_on_owner,
        [&] {
          if (owner_task(owner_.load(std::memory_order_relaxed)) != owner) {
            why = Why::owner_changed;
            return true;
          }
          if (!Env::task_on_cpu(owner) || Env::need_resched()) {
            why = Why::stop;
            return true;
          }
          return false;
        },
        forever, Env::policies().owner_spin.preempt_check_period,
        // The owner's vCPU: checked every preempt_check_period iterations (1 upstream, where
        // owner_on_cpu() runs on every pass; 256 in seed 004's rejected patch).
        [&] { return preempted = Env::vcpu_is_preempted(Env::task_cpu(owner)); });
    if (r == SpinResult::early && preempted) {
      Env::count(LockEvent::mutex_spin_preempted);
      return false;
    }
    return why == Why::owner_changed;
  }

  // mutex_optimistic_spin(). `waiter` is non-null for a woken first waiter, which spins
  // without the OSQ, concurrently with the OSQ head.
  bool optimistic_spin(Waiter* waiter) {
    if (!Env::policies().owner_spin.spin_on_owner) return false;
    if (waiter == nullptr) {
      // Skip the OSQ's cost when spinning cannot succeed.
      if (!can_spin_on_owner()) return false;
      Env::count(LockEvent::mutex_opt_spin);
      if (!osq_.lock()) {
        Env::count(LockEvent::mutex_opt_fail);
        return false;
      }
    } else {
      Env::count(LockEvent::mutex_opt_spin);
    }

    bool taken = false;
    for (;;) {
      Task* owner = trylock_common(false);
      if (owner == nullptr) {
        taken = true;
        break;
      }
      // Wait for the owner to release the lock or to stop running.
      if (!spin_on_owner(owner)) break;
    }
    if (waiter == nullptr) osq_.unlock();
    Env::count(taken ? LockEvent::mutex_opt_lock : LockEvent::mutex_opt_fail);
    // Upstream reschedules here if need_resched() ended the spin; the Env has no voluntary
    // yield, and the slow path is about to sleep (or take the lock) anyway.
    return taken;
  }

  // __mutex_unlock_slowpath()
  void unlock_slowpath() {
    // Release first so contenders can proceed before we take wait_lock -- except under
    // HANDOFF, where the word must go straight to the first waiter.
    std::uintptr_t owner = owner_.load(std::memory_order_relaxed);
    for (;;) {
      assert(owner_task(owner) == Env::current() && (owner & kPickup) == 0);
      if ((owner & kHandoff) != 0) break;
      if (owner_.compare_exchange(owner, owner & kFlags, std::memory_order_release)) {
        if ((owner & kWaiters) != 0) break;
        return;
      }
    }

    wait_lock_.lock();
    Task* next = nullptr;
    if (!waiters_.empty()) next = waiters_.front()->task;  // wake_q_add
    if ((owner & kHandoff) != 0) handoff(next);
    wait_lock_.unlock();
    if (next != nullptr) Env::wake(next);  // wake_up_q, after dropping wait_lock
  }

  // __mutex_handoff(): ownership straight to `task` with PICKUP, keeping WAITERS; release
  // pairs with the new owner's acquiring trylock.
  void handoff(Task* task) {
    std::uintptr_t owner = owner_.load(std::memory_order_relaxed);
    std::uintptr_t desired = 0;
    do {
      desired = (owner & kWaiters) | (task != nullptr ? to_word(task) | kPickup : 0);
    } while (!owner_.compare_exchange(owner, desired, std::memory_order_release));
    if (task != nullptr) Env::count(LockEvent::mutex_handoff);
  }

  // wait_lock last: its lock word shares the first cache line with the others (as in
  // struct mutex), and its bookkeeping behind that is plain memory.
  typename Env::template atomic<std::uintptr_t> owner_{};
  WaitList<Env, Waiter> waiters_;
  Osq<Env> osq_;
  RawSpinlock<Env> wait_lock_;
};

}  // namespace pvlock
