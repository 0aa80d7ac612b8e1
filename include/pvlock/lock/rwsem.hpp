// SPDX-License-Identifier: GPL-2.0-only
// struct rw_semaphore (kernel/locking/rwsem.c, v5.11+ design): a sleeping reader-writer
// lock. lock()/unlock() are down_write()/up_write(), lock_shared()/unlock_shared() are
// down_read()/up_read(). Word layout and constants: rwsem_word.hpp.
//
// - Readers take the lock with one fetch_add of READER_BIAS; if a writer, a waiter or a
//   hand-off is in the way they may still *steal* it (no writer holds it and no HANDOFF),
//   otherwise they queue and sleep. Readers never spin (removed in v5.11, 617f3ef95177).
//   With policies().rwsem.reader_spin (the v5.3-v5.10 rwsem) they do not steal but spin:
//   a reader that finds a running writer owner queues on the OSQ and spins on it like a
//   writer, taking the lock unqueued (no writer, no HANDOFF) when it can; the owner word
//   then has a nonspinnable bit per side, RD_NONSPINNABLE set with WR_NONSPINNABLE by a
//   writer that timed out on readers, and again by a writer that got the lock after seeing
//   them (reader spinning had not paid off), until a writer takes the lock unseen.
// - Writers spin optimistically, queued on an OSQ: on a writer owner for as long as it runs
//   (and, in a guest, its vCPU is not preempted: the preempt_check_period knob of seed 004
//   applies here as in the mutex); on reader owners for a bounded time only,
//   (10 + readers/2) us capped at 25 us, since readers cannot be watched. A writer that times
//   out marks the owner NONSPINNABLE so that the writers behind it sleep at once.
// - Waiters sleep on a FIFO list. A first waiter queued for more than ~4 ms sets HANDOFF:
//   from then on nobody may steal the lock and it goes to that waiter (a writer takes it
//   under wait_lock, readers are granted it by the unlocker's rwsem_mark_wake).
// - wait_lock is the kernel's raw spinlock (raw_spinlock.hpp), taken with IRQs off as v6.1
//   does: raw_spin_lock_irq in the slow paths, raw_spin_lock_irqsave in rwsem_wake.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/mutex_wait_list.hpp"
#include "pvlock/lock/osq.hpp"
#include "pvlock/lock/raw_spinlock.hpp"
#include "pvlock/lock/rwsem_word.hpp"

namespace pvlock {

template <Environment Env>
class RwSem {
 public:
  using Task = typename Env::task;
  static constexpr const char* kName = "rwsem";

  // down_write()
  void lock() {
    Env::preempt_disable();
    if (!write_trylock()) write_slowpath();
    Env::preempt_enable();
  }
  // down_write_trylock()
  bool try_lock() {
    Env::preempt_disable();
    const bool ok = write_trylock();
    Env::preempt_enable();
    return ok;
  }
  // up_write()
  void unlock() {
    Env::preempt_disable();
    owner_.store(0, std::memory_order_relaxed);  // rwsem_clear_owner(), before the release
    const std::uintptr_t old = count_.fetch_sub(rwsem::kWriterLocked, std::memory_order_release);
    if ((old & rwsem::kFlagWaiters) != 0) wake();
    Env::preempt_enable();
  }

  // down_read()
  void lock_shared() {
    Env::preempt_disable();
    std::uintptr_t count = 0;
    if (!read_trylock(count)) read_slowpath(count);
    Env::preempt_enable();
  }
  // down_read_trylock(): unlike the fast path, never leaves a bias behind.
  bool try_lock_shared() {
    Env::preempt_disable();
    bool ok = false;
    std::uintptr_t count = count_.load(std::memory_order_relaxed);
    while ((count & rwsem::kReadFailedMask) == 0) {
      if (count_.compare_exchange(count, count + rwsem::kReaderBias, std::memory_order_acquire)) {
        set_reader_owned(Env::current());
        ok = true;
        break;
      }
    }
    Env::preempt_enable();
    return ok;
  }
  // up_read(): the last reader out wakes the queue (a writer, typically).
  void unlock_shared() {
    Env::preempt_disable();
    const std::uintptr_t count =
        count_.fetch_sub(rwsem::kReaderBias, std::memory_order_release) - rwsem::kReaderBias;
    if ((count & (rwsem::kLockMask | rwsem::kFlagWaiters)) == rwsem::kFlagWaiters) {
      clear_nonspinnable();
      wake();
    }
    Env::preempt_enable();
  }

  bool is_locked() const {
    return (count_.load(std::memory_order_relaxed) & rwsem::kLockMask) != 0;
  }
  // For tests and tools: the raw words.
  std::uintptr_t count_word() const { return count_.load(std::memory_order_relaxed); }
  std::uintptr_t owner_word() const { return owner_.load(std::memory_order_relaxed); }
  bool osq_busy() const { return osq_.is_locked(); }
  // The wait_lock itself (its kind; a lock_stat row of its own).
  RawSpinlock<Env>& wait_lock() { return wait_lock_; }
  const RawSpinlock<Env>& wait_lock() const { return wait_lock_; }

 private:
  enum class WaiterType : std::uint8_t { write, read };
  enum class WakeType : std::uint8_t {
    any,         // RWSEM_WAKE_ANY: whatever is at the head of the queue
    readers,     // RWSEM_WAKE_READERS: readers only
    read_owned,  // RWSEM_WAKE_READ_OWNED: the waker holds the read lock already
  };

  // struct rwsem_waiter, on the sleeping task's stack.
  // A waiter lives on its task's stack (rwsem_down_*_slowpath's local rwsem_waiter) and its
  // task and handoff_set words are shared with the waker. Aligned to a cache line so that it
  // never straddles two: where the frame happens to put it must not change how many line
  // transfers a hand-over costs (the coherence model keys lines by address).
  struct alignas(64) Waiter {
    Waiter* next = nullptr;
    Waiter* prev = nullptr;
    // A reader is granted the lock by the waker clearing this (store-release); from that
    // moment the record may vanish, so the waker never touches it again.
    typename Env::template atomic<std::uintptr_t> task{};
    WaiterType type = WaiterType::write;
    std::int64_t timeout_ns = 0;
    // v5.3-v5.10: the owner word at the reader's slowpath entry (its task if reader-owned,
    // else only RD_NONSPINNABLE), handed on to the owner word when the reader is granted.
    std::uintptr_t last_rowner = 0;
    // Written under wait_lock by whoever sets HANDOFF on this (first) waiter's behalf, read
    // by the waiter itself after dropping wait_lock.
    typename Env::template atomic<std::uint8_t> handoff_set{};
  };

  // DEFINE_WAKE_Q: tasks to wake once wait_lock is dropped.
  struct WakeQ {
    std::array<Task*, rwsem::kMaxReadersWakeup> tasks{};
    std::size_t n = 0;
    void add(Task* t) { tasks[n++] = t; }
    bool empty() const { return n == 0; }
    void wake_all() {
      for (std::size_t i = 0; i < n; ++i) Env::wake(tasks[i]);
      n = 0;
    }
  };

  static std::uintptr_t task_word(Task* t) { return reinterpret_cast<std::uintptr_t>(t); }
  static Task* word_task(std::uintptr_t w) {
    return reinterpret_cast<Task*>(w & ~rwsem::kOwnerFlagsMask);
  }
  static std::uintptr_t delta(std::int64_t d) { return static_cast<std::uintptr_t>(d); }

  // ---- era -------------------------------------------------------------------------------
  // The v5.3-v5.10 rwsem: readers spin, one nonspinnable bit per side.
  static bool reader_spin_era() { return Env::policies().rwsem.reader_spin; }
  // The owner bit that keeps writers from spinning.
  static std::uintptr_t wr_nonspinnable() {
    return reader_spin_era() ? rwsem::kWrNonspinnable : rwsem::kNonspinnable;
  }
  // Every nonspinnable bit of the era (RWSEM_NONSPINNABLE).
  static std::uintptr_t all_nonspinnable() {
    return reader_spin_era() ? rwsem::kRdNonspinnable | rwsem::kWrNonspinnable
                             : rwsem::kNonspinnable;
  }

  // ---- owner word -----------------------------------------------------------------------
  void set_owner() { owner_.store(task_word(Env::current()), std::memory_order_relaxed); }
  // __rwsem_set_reader_owned(): keeps NONSPINNABLE (a hint for writers, not a lock state;
  // v5.3-v5.10 keep RD_NONSPINNABLE, the same bit). `extra`: RD_NONSPINNABLE handed on
  // from a granted reader's slowpath entry.
  void set_reader_owned(Task* t, std::uintptr_t extra = 0) {
    const std::uintptr_t keep = owner_.load(std::memory_order_relaxed) & rwsem::kNonspinnable;
    owner_.store(task_word(t) | rwsem::kReaderOwned | keep | extra, std::memory_order_relaxed);
  }
  // rwsem_set_nonspinnable(): only while still reader-owned.
  void set_nonspinnable() {
    const std::uintptr_t bits = all_nonspinnable();
    std::uintptr_t owner = owner_.load(std::memory_order_relaxed);
    do {
      if ((owner & rwsem::kReaderOwned) == 0 || (owner & bits) != 0) return;
    } while (!owner_.compare_exchange(owner, owner | bits, std::memory_order_relaxed));
  }
  // clear_nonspinnable() (v5.3-v5.10 clear_wr_nonspinnable(): readers stay held off).
  void clear_nonspinnable() {
    const std::uintptr_t bit = wr_nonspinnable();
    if ((owner_.load(std::memory_order_relaxed) & bit) != 0)
      owner_.fetch_and(~bit, std::memory_order_relaxed);
  }

  // ---- fast paths -----------------------------------------------------------------------
  bool write_trylock() {
    std::uintptr_t unlocked = 0;
    if (!count_.compare_exchange(unlocked, rwsem::kWriterLocked, std::memory_order_acquire))
      return false;
    set_owner();
    return true;
  }
  // rwsem_read_trylock(): the bias stays in count even on failure; the slow path decides.
  bool read_trylock(std::uintptr_t& count) {
    count = count_.fetch_add(rwsem::kReaderBias, std::memory_order_acquire) + rwsem::kReaderBias;
    if ((count & rwsem::kFlagReadFail) != 0) set_nonspinnable();
    if ((count & rwsem::kReadFailedMask) != 0) return false;
    set_reader_owned(Env::current());
    return true;
  }

  // ---- wait list (wait_lock held) -------------------------------------------------------
  void add_waiter(Waiter* w) { waiters_.push_back(w); }
  // rwsem_del_waiter(): the last waiter out clears WAITERS and HANDOFF.
  void del_waiter(Waiter* w) {
    waiters_.remove(w);
    if (waiters_.empty())
      count_.fetch_and(~(rwsem::kFlagHandoff | rwsem::kFlagWaiters), std::memory_order_relaxed);
  }

  // rwsem_mark_wake(): decide whom to wake. A writer at the head is only woken (it takes the
  // lock itself and may still lose it to a stealer); readers are *granted* the lock here,
  // all queued readers at once (up to MAX_READERS_WAKEUP), writers in between skipped.
  void mark_wake(WakeType type, WakeQ& wq) {
    Waiter* first = waiters_.front();
    if (first->type == WaiterType::write) {
      if (type == WakeType::any) {
        wq.add(word_task(first->task.load(std::memory_order_relaxed)));
        Env::count(LockEvent::rwsem_wake_writer);
      }
      return;
    }
    if ((count_.load(std::memory_order_relaxed) & rwsem::kFlagReadFail) != 0) return;

    std::int64_t adjustment = 0;
    if (type != WakeType::read_owned) {
      // Grant the first reader before counting the rest, so a writer that stole the lock
      // meanwhile is noticed early.
      adjustment = static_cast<std::int64_t>(rwsem::kReaderBias);
      const std::uintptr_t old = count_.fetch_add(delta(adjustment), std::memory_order_seq_cst);
      if ((old & rwsem::kWriterMask) != 0) {
        // A writer holds it. If the first reader has waited too long, force the issue.
        if (first_waiter_handoff()) {
          // 6eebd5fb2083: a timed-out first reader owns the hand-off, whoever set the bit.
          if (Env::now_ns() > first->timeout_ns) {
            if ((old & rwsem::kFlagHandoff) == 0) {
              adjustment -= static_cast<std::int64_t>(rwsem::kFlagHandoff);
              Env::count(LockEvent::rwsem_rlock_handoff);
            }
            first->handoff_set.store(1, std::memory_order_relaxed);
          }
        } else if ((old & rwsem::kFlagHandoff) == 0 && Env::now_ns() > first->timeout_ns) {
          adjustment -= static_cast<std::int64_t>(rwsem::kFlagHandoff);  // and no owner mark
          Env::count(LockEvent::rwsem_rlock_handoff);
        }
        count_.fetch_add(delta(-adjustment), std::memory_order_seq_cst);
        return;
      }
      // Reader-owned from now on: spinning writers see it early. v5.3-v5.10 hand on the
      // RD_NONSPINNABLE the first reader saw at its slowpath entry.
      std::uintptr_t extra = 0;
      if (reader_spin_era() && (first->last_rowner & rwsem::kRdNonspinnable) != 0) {
        extra = rwsem::kRdNonspinnable;
        Env::count(LockEvent::rwsem_opt_norspin);
      }
      set_reader_owned(word_task(first->task.load(std::memory_order_relaxed)), extra);
    }

    // Pass 1: move every queued reader (writers stay, in order) to a private list, chained
    // through their own `next` links (the kernel's list_move_tail to wlist).
    Waiter* granted = nullptr;
    Waiter* granted_tail = nullptr;
    std::size_t woken = 0;
    for (Waiter* w = waiters_.front(); w != nullptr;) {
      Waiter* next = w->next;
      if (w->type == WaiterType::read) {
        waiters_.remove(w);
        (granted_tail != nullptr ? granted_tail->next : granted) = w;
        granted_tail = w;
        if (++woken >= rwsem::kMaxReadersWakeup) break;
      }
      w = next;
    }
    adjustment = static_cast<std::int64_t>(woken * rwsem::kReaderBias) - adjustment;
    if (woken > 0) Env::count(LockEvent::rwsem_wake_reader, woken);

    const std::uintptr_t old = count_.load(std::memory_order_relaxed);
    if (waiters_.empty()) {
      adjustment -= static_cast<std::int64_t>(rwsem::kFlagWaiters);
      if ((old & rwsem::kFlagHandoff) != 0)
        adjustment -= static_cast<std::int64_t>(rwsem::kFlagHandoff);
    } else if (woken > 0 && (old & rwsem::kFlagHandoff) != 0) {
      // Readers got the lock: no writer needs to be forced out any more.
      adjustment -= static_cast<std::int64_t>(rwsem::kFlagHandoff);
    }
    if (adjustment != 0) count_.fetch_add(delta(adjustment), std::memory_order_seq_cst);

    // Pass 2: the reader count is final, now let the readers go. Each record may disappear
    // as soon as its task field is cleared.
    for (Waiter* w = granted; w != nullptr;) {
      Waiter* next = w->next;
      Task* t = word_task(w->task.load(std::memory_order_relaxed));
      // Release for the grant, and one side of a store-buffering pattern: the waiter stores
      // its state (Env::prepare_block) then loads this field, the waker stores this field
      // then exchanges the state (Env::wake). Upstream the smp_mb() of set_current_state()
      // and the one of try_to_wake_up() forbid both reading the old value; here all four
      // accesses must be seq_cst for C++ to forbid it, so Env::wake's exchange is seq_cst
      // too (an acq_rel one would let the waker skip the wake-up and the reader sleep).
      w->task.store(0, std::memory_order_seq_cst);
      wq.add(t);
      w = next;
    }
  }

  // rwsem_cond_wake_waiter(): wake the queue if the lock is not writer-held. (The v5.3-v5.10
  // writer did the same inline without touching WR_NONSPINNABLE.)
  void cond_wake_waiter(std::uintptr_t count, WakeQ& wq) {
    if ((count & rwsem::kWriterMask) != 0) return;
    WakeType type = WakeType::readers;
    if ((count & rwsem::kReaderMask) == 0) {
      type = WakeType::any;
      if (!reader_spin_era()) clear_nonspinnable();
    }
    mark_wake(type, wq);
  }

  // rwsem_wake(): from up_read/up_write when WAITERS is set.
  void wake() {
    WakeQ wq;
    const IrqFlags flags = wait_lock_.lock_irqsave();
    if (!waiters_.empty()) mark_wake(WakeType::any, wq);
    wait_lock_.unlock_irqrestore(flags);
    wq.wake_all();
  }

  // schedule_preempt_disabled()
  static void schedule_preempt_disabled() {
    Env::preempt_enable();
    Env::block();
    Env::preempt_disable();
  }

  // ---- readers --------------------------------------------------------------------------
  // rwsem_down_read_slowpath(); `count` includes our own bias.
  void read_slowpath(std::uintptr_t count) {
    if (reader_spin_era()) {
      read_slowpath_spinning();
      return;
    }
    std::int64_t adjustment = -static_cast<std::int64_t>(rwsem::kReaderBias);
    const std::uintptr_t readers = (count & ~rwsem::kFlagReadFail) >> rwsem::kReaderShift;

    // Reader lock stealing, unless the lock is most likely owned by readers already -- a
    // constant stream of stealing readers would starve the sleeping writer.
    const bool likely_reader_owned =
        (owner_.load(std::memory_order_relaxed) & rwsem::kReaderOwned) != 0 && readers > 1 &&
        (count & rwsem::kWriterLocked) == 0;
    if (!likely_reader_owned && (count & (rwsem::kWriterLocked | rwsem::kFlagHandoff)) == 0) {
      set_reader_owned(Env::current());
      Env::count(LockEvent::rwsem_rlock_steal);
      // The first reader in wakes the readers queued behind the (absent) writer.
      if (readers == 1 && (count & rwsem::kFlagWaiters) != 0) {
        WakeQ wq;
        wait_lock_.lock_irq();
        if (!waiters_.empty()) mark_wake(WakeType::read_owned, wq);
        wait_lock_.unlock_irq();
        wq.wake_all();
      }
      return;
    }

    Waiter waiter;
    waiter.task.store(task_word(Env::current()), std::memory_order_relaxed);
    waiter.type = WaiterType::read;
    waiter.timeout_ns = handoff_deadline();

    WakeQ wq;
    wait_lock_.lock_irq();
    if (waiters_.empty()) {
      // Nobody queued and no writer: our bias already makes us an owner.
      if ((count_.load(std::memory_order_acquire) & rwsem::kWriterMask) == 0) {
        wait_lock_.unlock_irq();
        set_reader_owned(Env::current());
        Env::count(LockEvent::rwsem_rlock_fast);
        return;
      }
      adjustment += static_cast<std::int64_t>(rwsem::kFlagWaiters);
    }
    add_waiter(&waiter);
    // Queued: drop our bias (and raise WAITERS if we are the first).
    count = count_.fetch_add(delta(adjustment), std::memory_order_seq_cst) + delta(adjustment);
    cond_wake_waiter(count, wq);
    wait_lock_.unlock_irq();
    wq.wake_all();
    wait_for_grant(waiter);
  }

  // The v5.3-v5.10 rwsem_down_read_slowpath(): no stealing; spin on the OSQ unless the
  // owner word says readers may not, then queue. Our bias is in count.
  void read_slowpath_spinning() {
    std::int64_t adjustment = -static_cast<std::int64_t>(rwsem::kReaderBias);
    // The reader-owner we saw (or, if none, only whether readers may spin): the reader-phase
    // trylock below and the grant in mark_wake() look at it.
    std::uintptr_t last_rowner = owner_.load(std::memory_order_relaxed);
    if ((last_rowner & rwsem::kReaderOwned) == 0) last_rowner &= rwsem::kRdNonspinnable;

    if (Env::policies().owner_spin.spin_on_owner && can_spin_on_owner(rwsem::kRdNonspinnable)) {
      // Spin without our bias, which would look like a reader owner to the writers.
      count_.fetch_add(delta(-static_cast<std::int64_t>(rwsem::kReaderBias)),
                       std::memory_order_relaxed);
      adjustment = 0;
      if (optimistic_spin(false)) {
        // Wake the readers queued behind us if a reader heads the queue.
        if ((count_.load(std::memory_order_relaxed) & rwsem::kFlagWaiters) != 0) {
          WakeQ wq;
          wait_lock_.lock_irq();
          if (!waiters_.empty()) mark_wake(WakeType::read_owned, wq);
          wait_lock_.unlock_irq();
          wq.wake_all();
        }
        return;
      }
      if (reader_phase_trylock(last_rowner)) return;
      Env::count(LockEvent::rwsem_opt_fail);
    }

    Waiter waiter;
    waiter.task.store(task_word(Env::current()), std::memory_order_relaxed);
    waiter.type = WaiterType::read;
    waiter.timeout_ns = handoff_deadline();
    waiter.last_rowner = last_rowner;

    WakeQ wq;
    wait_lock_.lock_irq();
    const bool first = waiters_.empty();
    if (first) {
      // Nobody queued, no writer and no hand-off: our bias (if we kept it) makes us an owner.
      if (adjustment != 0 && (count_.load(std::memory_order_acquire) &
                              (rwsem::kWriterMask | rwsem::kFlagHandoff)) == 0) {
        wait_lock_.unlock_irq();
        set_reader_owned(Env::current());
        Env::count(LockEvent::rwsem_rlock_fast);
        return;
      }
      adjustment += static_cast<std::int64_t>(rwsem::kFlagWaiters);
    }
    add_waiter(&waiter);
    std::uintptr_t count = 0;
    if (adjustment != 0)
      count = count_.fetch_add(delta(adjustment), std::memory_order_seq_cst) + delta(adjustment);
    else
      count = count_.load(std::memory_order_seq_cst);
    // No lock holder: wake the head of the queue. No writer and we are first: wake
    // ourselves, to join the readers holding it.
    bool wake = false;
    if ((count & rwsem::kLockMask) == 0) {
      clear_nonspinnable();
      wake = true;
    }
    if (wake || ((count & rwsem::kWriterMask) == 0 && first)) mark_wake(WakeType::any, wq);
    wait_lock_.unlock_irq();
    wq.wake_all();
    wait_for_grant(waiter);
  }

  // rwsem_try_read_lock_unqueued() (v5.3-v5.10): join the readers unless a writer holds it
  // or a hand-off is pending; back the bias out if one appeared meanwhile.
  bool try_read_lock_unqueued() {
    if ((count_.load(std::memory_order_relaxed) & (rwsem::kWriterMask | rwsem::kFlagHandoff)) != 0)
      return false;
    const std::uintptr_t old = count_.fetch_add(rwsem::kReaderBias, std::memory_order_acquire);
    if ((old & (rwsem::kWriterMask | rwsem::kFlagHandoff)) == 0) {
      set_reader_owned(Env::current());
      Env::count(LockEvent::rwsem_opt_rlock);
      return true;
    }
    count_.fetch_add(delta(-static_cast<std::int64_t>(rwsem::kReaderBias)),
                     std::memory_order_relaxed);
    return false;
  }

  // rwsem_reader_phase_trylock() (v5.3-v5.10): after a failed spin, still join a reader
  // phase that began while we spun (the lock is reader-owned now, by another reader than at
  // our slowpath entry, or was not reader-owned then).
  bool reader_phase_trylock(std::uintptr_t last_rowner) {
    const std::uintptr_t owner = owner_.load(std::memory_order_relaxed);
    if ((owner & rwsem::kReaderOwned) == 0) return false;
    if (((owner ^ last_rowner) & ~rwsem::kOwnerFlagsMask) == 0) return false;
    if (!try_read_lock_unqueued()) return false;
    Env::count(LockEvent::rwsem_opt_rlock2);
    return true;
  }

  // Sleep until mark_wake() grants us the lock.
  void wait_for_grant(Waiter& waiter) {
    for (;;) {
      Env::prepare_block();
      // Pairs with mark_wake()'s store: the grant and everything before it. seq_cst, as are
      // prepare_block()'s state store before it and Env::wake()'s exchange on the other
      // side, like set_current_state()'s barrier (see mark_wake()).
      if (waiter.task.load(std::memory_order_seq_cst) == 0) break;
      schedule_preempt_disabled();
      Env::count(LockEvent::rwsem_sleep_reader);
    }
    // (__set_current_state(TASK_RUNNING) has no Env counterpart; see mutex.hpp.)
    Env::count(LockEvent::rwsem_rlock);
  }

  // ---- writers --------------------------------------------------------------------------
  // rwsem_try_write_lock(), wait_lock held: take the lock, or (if allowed) set HANDOFF.
  bool try_write_lock(Waiter* w) {
    Waiter* first = waiters_.front();
    std::uintptr_t count = count_.load(std::memory_order_relaxed);
    std::uintptr_t desired = 0;
    const bool by_first = first_waiter_handoff();
    do {
      const bool has_handoff = (count & rwsem::kFlagHandoff) != 0;
      if (has_handoff && w != first) {
        // Since 6eebd5fb2083 HANDOFF stops us only if the first waiter claimed it; before,
        // any HANDOFF stopped every writer but the first.
        if (!by_first || first->handoff_set.load(std::memory_order_relaxed) != 0) return false;
      } else if (has_handoff && !by_first) {
        w->handoff_set.store(1, std::memory_order_relaxed);  // the first inherits the bit
      }
      desired = count;
      if ((count & rwsem::kLockMask) != 0) {
        // Held: claim HANDOFF if we have waited too long (upstream also for RT tasks).
        if (has_handoff || Env::now_ns() <= w->timeout_ns) return false;
        desired |= rwsem::kFlagHandoff;
      } else {
        desired |= rwsem::kWriterLocked;
        desired &= ~rwsem::kFlagHandoff;
        if (waiters_.singular()) desired &= ~rwsem::kFlagWaiters;
      }
    } while (!count_.compare_exchange(count, desired, std::memory_order_acquire));

    if ((desired & rwsem::kFlagHandoff) != 0) {
      // Since 6eebd5fb2083 (6.1.y) the first waiter is marked; before, the setter itself.
      (by_first ? first : w)->handoff_set.store(1, std::memory_order_relaxed);
      Env::count(LockEvent::rwsem_wlock_handoff);
      return false;
    }
    waiters_.remove(w);  // rwsem_del_waiter() minus the flags, already folded in above
    set_owner();
    return true;
  }

  // rwsem_down_write_slowpath()
  void write_slowpath() {
    if (Env::policies().owner_spin.spin_on_owner && can_spin_on_owner(wr_nonspinnable()) &&
        optimistic_spin(true))
      return;
    // v5.3-v5.10: a writer that failed to spin where a nonspinnable bit was set turns reader
    // spinning off for this rwsem once it holds the lock (rwsem_disable_reader_optspin()).
    const bool disable_rspin =
        reader_spin_era() && (owner_.load(std::memory_order_relaxed) & all_nonspinnable()) != 0;

    Waiter waiter;
    waiter.task.store(task_word(Env::current()), std::memory_order_relaxed);
    waiter.type = WaiterType::write;
    waiter.timeout_ns = handoff_deadline();

    WakeQ wq;
    wait_lock_.lock_irq();
    add_waiter(&waiter);
    if (waiters_.front() != &waiter) {
      // Not first: if the lock is not writer-held, the waiters ahead of us may be runnable.
      cond_wake_waiter(count_.load(std::memory_order_relaxed), wq);
      if (!wq.empty()) {
        wait_lock_.unlock_irq();  // keep wait_lock hold times short while waking readers
        wq.wake_all();
        wait_lock_.lock_irq();
      }
    } else {
      count_.fetch_or(rwsem::kFlagWaiters, std::memory_order_relaxed);
    }

    Env::prepare_block();
    for (;;) {
      if (try_write_lock(&waiter)) break;
      wait_lock_.unlock_irq();
      // With HANDOFF claimed the lock is ours next: spin on a running writer owner instead
      // of sleeping, and retry at once if it has just let go.
      bool retry_now = false;
      if (waiter.handoff_set.load(std::memory_order_relaxed) != 0)
        retry_now = spin_on_owner(all_nonspinnable()) == rwsem::OwnerState::null;
      if (!retry_now) {
        schedule_preempt_disabled();
        Env::count(LockEvent::rwsem_sleep_writer);
        Env::prepare_block();
      }
      wait_lock_.lock_irq();
    }
    if (disable_rspin) {
      owner_.fetch_or(rwsem::kRdNonspinnable, std::memory_order_relaxed);
      Env::count(LockEvent::rwsem_opt_norspin);
    }
    wait_lock_.unlock_irq();
    Env::count(LockEvent::rwsem_wlock);
  }

  static bool first_waiter_handoff() {
    return Env::policies().handoff.rwsem_handoff_set == RwsemHandoffSet::first_waiter;
  }

  // When a waiter may claim HANDOFF (RWSEM_WAIT_TIMEOUT after it queued). Before
  // 4f23dbc1e657 (v5.3) there was no hand-off: a waiter never stops stealers and never spins
  // as the designated next owner (policies().handoff.rwsem = false), so it never times out.
  static std::int64_t handoff_deadline() {
    if (!Env::policies().handoff.rwsem) return std::numeric_limits<std::int64_t>::max();
    return Env::now_ns() + rwsem::kWaitTimeoutNs;
  }

  // ---- optimistic spinning (writers; v5.3-v5.10 readers too) ------------------------------
  // rwsem_can_spin_on_owner(); `nonspinnable`: the owner bit that stops this side.
  bool can_spin_on_owner(std::uintptr_t nonspinnable) {
    bool ok = !Env::need_resched();
    if (ok) {
      const std::uintptr_t owner = owner_.load(std::memory_order_relaxed);
      Task* t = word_task(owner);
      if ((owner & nonspinnable) != 0 ||
          (t != nullptr && (owner & rwsem::kReaderOwned) == 0 && !owner_on_cpu<Env>(t)))
        ok = false;
    }
    if (!ok) Env::count(LockEvent::rwsem_opt_fail);
    return ok;
  }

  // rwsem_try_write_lock_unqueued(): steal while no lock bit and no HANDOFF is set.
  bool try_write_lock_unqueued() {
    std::uintptr_t count = count_.load(std::memory_order_relaxed);
    while (rwsem::free_for_writer(count)) {
      if (count_.compare_exchange(count, count | rwsem::kWriterLocked, std::memory_order_acquire)) {
        set_owner();
        Env::count(LockEvent::rwsem_opt_lock);
        return true;
      }
    }
    return false;
  }

  // rwsem_spin_on_owner(): spin while the same writer owns the lock and runs. Returns the
  // state of the new owner, or nonspinnable if the spin had to stop.
  rwsem::OwnerState spin_on_owner(std::uintptr_t nonspinnable) {
    if (!Env::policies().owner_spin.spin_on_owner) return rwsem::OwnerState::nonspinnable;
    const std::uintptr_t owner = owner_.load(std::memory_order_relaxed);
    const rwsem::OwnerState state = rwsem::owner_state(owner, nonspinnable);
    if (state != rwsem::OwnerState::writer) return state;

    Task* t = word_task(owner);
    std::uintptr_t now_owner = owner;
    bool changed = false;
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    Env::spin_until(
        SpinSite::rwsem_spin_on_owner,
        [&] {
          now_owner = owner_.load(std::memory_order_relaxed);
          if (now_owner != owner) return changed = true;
          return Env::need_resched() || !Env::task_on_cpu(t);
        },
        forever, Env::policies().owner_spin.preempt_check_period,
        // owner_on_cpu()'s vcpu_is_preempted(), every preempt_check_period iterations.
        [&] { return Env::vcpu_is_preempted(Env::task_cpu(t)); });
    return changed ? rwsem::owner_state(now_owner, nonspinnable) : rwsem::OwnerState::nonspinnable;
  }

  // rwsem_optimistic_spin(): OSQ, then alternate owner-spinning and unqueued trylocks. A
  // reader (`wlock` false, v5.3-v5.10 only) has no time limit on readers: it joins them.
  // A reader's failure is counted by its caller, which may still take the lock.
  bool optimistic_spin(bool wlock) {
    const std::uintptr_t nonspinnable = wlock ? wr_nonspinnable() : rwsem::kRdNonspinnable;
    bool taken = false;
    if (osq_.lock()) {
      rwsem::OwnerState prev_state = rwsem::OwnerState::null;
      std::int64_t deadline = 0;
      for (;;) {
        const rwsem::OwnerState state = spin_on_owner(nonspinnable);
        if (!rwsem::spinnable(state)) break;
        if ((taken = wlock ? try_write_lock_unqueued() : try_read_lock_unqueued())) break;

        if (!wlock) {
          // Not a running writer to watch (that is spin_on_owner()): spin until the owner
          // word or the lock word changes, as the kernel's loop re-reads them.
          if (state != rwsem::OwnerState::writer && !wait_read_chance()) break;
        } else if (state == rwsem::OwnerState::reader) {
          // The time limit restarts whenever a reader phase begins, so that a writer may
          // steal between two reader phases and still spin a full period on the second.
          if (prev_state != rwsem::OwnerState::reader) {
            if ((owner_.load(std::memory_order_relaxed) & nonspinnable) != 0) break;
            deadline = Env::now_ns() + reader_spin_limit();
          }
          bool timed_out = false;
          if (!wait_reader_phase(deadline, nonspinnable, timed_out)) {
            if (timed_out) {
              set_nonspinnable();
              Env::count(LockEvent::rwsem_opt_nospin);
            }
            break;
          }
        } else if (state == rwsem::OwnerState::null) {
          // No owner recorded yet the lock is not free (HANDOFF, or a new owner that has not
          // written the owner word yet): wait for either to change.
          if (!wait_owner_appears()) break;
        }
        prev_state = state;
      }
      osq_.unlock();
    }
    if (!taken && wlock) Env::count(LockEvent::rwsem_opt_fail);
    return taken;
  }

  // A spinning reader's wait (v5.3-v5.10): until the owner word changes or no writer and no
  // hand-off is in the way. False on need_resched().
  bool wait_read_chance() {
    const std::uintptr_t owner = owner_.load(std::memory_order_relaxed);
    bool resched = false;
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    Env::spin_until(
        SpinSite::rwsem_spin_on_owner,
        [&] {
          if (owner_.load(std::memory_order_relaxed) != owner) return true;
          if ((count_.load(std::memory_order_relaxed) &
               (rwsem::kWriterMask | rwsem::kFlagHandoff)) == 0)
            return true;
          return resched = Env::need_resched();
        },
        forever, 0, [] { return false; });
    return !resched;
  }

  std::int64_t reader_spin_limit() const {
    const std::uintptr_t count = count_.load(std::memory_order_relaxed) & ~rwsem::kFlagReadFail;
    return rwsem::reader_spin_limit_ns(count >> rwsem::kReaderShift);
  }

  // The reader-owned part of rwsem_optimistic_spin()'s loop: spin until the lock looks free
  // to a writer, or the owner stops being "readers" (a writer stole it, or someone set
  // NONSPINNABLE). need_resched() ends it at once, the clock every 16 iterations. False if
  // spinning must stop (`timed_out` says whether it was the clock).
  bool wait_reader_phase(std::int64_t deadline, std::uintptr_t nonspinnable, bool& timed_out) {
    bool resched = false;
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    const SpinResult r = Env::spin_until(
        SpinSite::rwsem_spin_on_owner,
        [&] {
          if (rwsem::free_for_writer(count_.load(std::memory_order_relaxed))) return true;
          if ((owner_.load(std::memory_order_relaxed) & (rwsem::kReaderOwned | nonspinnable)) !=
              rwsem::kReaderOwned)
            return true;
          return resched = Env::need_resched();
        },
        forever, rwsem::kReaderSpinClockPeriod,
        [&] { return timed_out = Env::now_ns() > deadline; });
    return r == SpinResult::ready && !resched;
  }

  // Spin while no owner is recorded and the lock is not free to steal. False on
  // need_resched().
  bool wait_owner_appears() {
    bool resched = false;
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    Env::spin_until(
        SpinSite::rwsem_spin_on_owner,
        [&] {
          if (owner_.load(std::memory_order_relaxed) != 0) return true;
          if (rwsem::free_for_writer(count_.load(std::memory_order_relaxed))) return true;
          return resched = Env::need_resched();
        },
        forever, 0, [] { return false; });
    return !resched;
  }

  // wait_lock last, as in mutex.hpp: every simulated word in the first cache line.
  typename Env::template atomic<std::uintptr_t> count_{};
  typename Env::template atomic<std::uintptr_t> owner_{};
  WaitList<Env, Waiter> waiters_;
  Osq<Env> osq_;
  RawSpinlock<Env> wait_lock_;
};

}  // namespace pvlock
