// SPDX-License-Identifier: GPL-2.0-only
// Queued spinlock (kernel/locking/qspinlock.c, arch/x86/include/asm/qspinlock.h), native
// and paravirt from one slow path.
//
// Qspinlock<Env, false> is queued_spin_lock_slowpath(); Qspinlock<Env, true> is the same
// function compiled again with the PV hooks of pv_hooks.hpp, __pv_queued_spin_lock_slowpath.
//
// The lock is one 32-bit word (qspinlock_word.hpp). Acquisition, cheapest first:
//   1. fast path: cmpxchg 0 -> locked.
//   2. (native) virt_spin_lock: with virt_spin_lock_key on, test-and-set on the whole word.
//   3. (native) pending: a single contender sets the pending bit and spins on the owner's
//      locked byte, never touching a queue node (a cache line less per hand-off).
//   4. MCS queue: take one of this CPU's 4 nodes, publish it in the tail, spin on our own
//      node until we are the head, then on the lock word until owner and pending are gone.
// The PV variant skips 2 and 3; it may steal at 4 (pv_hooks.hpp trylock) and halts instead
// of spinning for long.
//
// Unlock: a release store of 0 to the locked byte (native); cmpxchg 1 -> 0 or the
// _Q_SLOW_VAL slow path that kicks a halted queue head (PV).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/check.hpp"
#include "pvlock/lock/pv_hooks.hpp"
#include "pvlock/lock/qspinlock_node.hpp"
#include "pvlock/lock/qspinlock_word.hpp"
#include "pvlock/lock/tas.hpp"

namespace pvlock {

template <Environment Env, bool PV>
class Qspinlock {
 public:
  static constexpr const char* kName = PV ? "pvqspinlock" : "qspinlock";

  // spin_lock(): preemption off, then queued_spin_lock().
  void lock() {
    Env::preempt_disable();
    std::uint32_t val = 0;
    if (w_.val.compare_exchange(val, qspin::kLockedVal, std::memory_order_acquire)) return;
    slowpath(val);
  }

  // spin_trylock(): queued_spin_trylock(), which only succeeds on a completely free word
  // (the PV stealing trylock lives in the slow path only).
  bool try_lock() {
    Env::preempt_disable();
    if (generic_trylock()) return true;
    Env::preempt_enable();
    return false;
  }

  // spin_unlock(): queued_spin_unlock() (native) / __pv_queued_spin_unlock() (PV).
  void unlock() {
    if constexpr (PV) {
      qspin::PvHooks<Env>::unlock(w_);
    } else {
      w_.locked().store(0, std::memory_order_release);
    }
    Env::preempt_enable();
  }

  // queued_spin_is_locked(): any of locked, pending or tail set.
  bool is_locked() const { return value() != 0; }
  // atomic_read(&lock->val), for tests and diagnostics.
  std::uint32_t value() const { return w_.val.load(std::memory_order_relaxed); }

 private:
  using NodeT = qspin::Node<Env>;
  using Pv = qspin::PvHooks<Env>;

  bool generic_trylock() {
    std::uint32_t val = w_.val.load(std::memory_order_relaxed);
    return val == 0 && w_.val.compare_exchange(val, qspin::kLockedVal, std::memory_order_acquire);
  }

  // queued_spin_trylock() as the slow path sees it: the stealing one in the PV compile.
  bool slowpath_trylock() {
    if constexpr (PV) {
      return Pv::trylock(w_);
    } else {
      return generic_trylock();
    }
  }

  static SpinBudget forever() { return SpinBudget{std::numeric_limits<std::uint64_t>::max()}; }
  static bool no_check() { return false; }

  // queued_spin_lock_slowpath(lock, val): val is the word the fast-path cmpxchg saw.
  void slowpath(std::uint32_t val) {
    if constexpr (!PV) {
      if (native_prequeue(val)) return;
      Env::count(LockEvent::lock_slowpath);
    }
    queue();
  }

  // virt_spin_lock() and the pending path. True if the lock was acquired.
  bool native_prequeue(std::uint32_t val) {
    using namespace qspin;
    if (Env::policies().qspinlock.virt_spin_lock) {
      Env::count(LockEvent::virt_spin_lock);
      TasLock<Env>::spin_acquire(w_.val);
      return true;
    }

    // A pending-only word is a hand-over in progress (0,1,0 -> 0,0,1): give it a bounded
    // number of re-reads (_Q_PENDING_LOOPS) to finish rather than queueing behind it.
    if (val == kPendingVal) {
      SpinBudget loops{Env::policies().qspinlock.pending_loops};
      Env::spin_until(
          SpinSite::qspinlock_pending,
          [&] {
            val = w_.val.load(std::memory_order_relaxed);
            return val != kPendingVal;
          },
          loops, 0, no_check);
    }
    // Any contention beyond the owner (pending or a queue): queue.
    if ((val & ~kLockedMask) != 0) return false;

    // 0,0,* -> 0,1,*: become the pending waiter (x86: lock bts; generic: fetch_or_acquire).
    val = w_.val.fetch_or(kPendingVal, std::memory_order_acquire);
    if ((val & ~kLockedMask) != 0) {
      // Someone else is pending or queued. Undo our pending bit if we set it: it may have
      // made a head's n,0,0 -> 0,0,1 cmpxchg fail, and that head now waits for a @next.
      if ((val & kPendingMask) == 0) w_.pending().store(0, std::memory_order_relaxed);
      return false;
    }
    // 0,1,1 -> *,1,0: wait for the owner. An acquire load pairs with the owner's release
    // store of the locked byte (the store below is no barrier).
    if ((val & kLockedMask) != 0) {
      SpinBudget b = forever();
      Env::spin_until(
          SpinSite::qspinlock_pending,
          [&] { return w_.locked().load(std::memory_order_acquire) == 0; }, b, 0, no_check);
    }
    // 0,1,0 -> 0,0,1: clear_pending_set_locked(), one 16-bit store.
    w_.locked_pending().store(static_cast<std::uint16_t>(kLockedVal), std::memory_order_relaxed);
    Env::count(LockEvent::lock_pending);
    return true;
  }

  // From the `queue:` (native) / `pv_queue:` (PV) label to `release:`.
  void queue() {
    using namespace qspin;
    const int cpu = Env::cpu();
    PerCpuNodes<Env>& pcpu = cpu_nodes<Env>(cpu);
    const std::uint32_t idx = pcpu.nodes[0].count++;
    if (idx >= kMaxNodes) {
      // Nested deeper than 4 contexts: no node left, spin on the trylock instead (unfair,
      // rare).
      Env::count(LockEvent::lock_no_node);
      trylock_without_node();
    } else {
      queue_on_node(cpu, &pcpu.nodes[idx], idx);
    }
    // Free the node: it is only needed while waiting.
    pcpu.nodes[0].count--;
  }

  void trylock_without_node() {
    using namespace qspin;
    while (!slowpath_trylock()) {
      SpinBudget b = forever();
      Env::spin_until(
          SpinSite::qspinlock_node,
          [&] {
            const std::uint32_t v = w_.val.load(std::memory_order_relaxed);
            if constexpr (PV) {
              return Pv::may_steal(v);
            } else {
              return v == 0;
            }
          },
          b, 0, no_check);
    }
  }

  void queue_on_node(int cpu, NodeT* node, std::uint32_t idx) {
    using namespace qspin;
    if (idx > 0)
      Env::count(static_cast<LockEvent>(static_cast<int>(LockEvent::lock_use_node2) +
                                        static_cast<int>(idx) - 1));
    const std::uint32_t tail = encode_tail(cpu, idx);
    // barrier(): count++ before the node is written, or an interrupt taking the same
    // nesting level could scribble over it.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    node->locked.store(0, std::memory_order_relaxed);
    node->next.store(0, std::memory_order_relaxed);
    if constexpr (PV) Pv::init_node(node);

    // The node's cache line was possibly cold: one more try before queueing.
    if (slowpath_trylock()) return;

    // The kernel issues smp_wmb() here, so that the node is initialised before the tail and
    // prev->next publish it, then a relaxed xchg_tail() whose result it uses through an
    // address dependency (old -> prev). C++ has neither a standalone write barrier that
    // ThreadSanitizer understands nor dependency ordering, so the same orderings are put on
    // the two publishing accesses: xchg_tail() is acq_rel and the prev->next store release.
    // (On x86 the xchg is a full barrier and the store a plain mov either way.)
    //
    // xchg_tail(): p,*,* -> n,*,*, a 16-bit xchg that leaves locked and pending alone.
    const std::uint32_t old =
        static_cast<std::uint32_t>(w_.tail().exchange(
            static_cast<std::uint16_t>(tail >> kTailOffset), std::memory_order_acq_rel))
        << kTailOffset;

    PVLOCK_LOCK_CHECK((old & kTailMask) != tail, "this CPU's node queued twice");
    NodeT* next = nullptr;
    if ((old & kTailMask) != 0) {
      NodeT* prev = decode_tail<Env>(old);
      prev->next.store(node_word<Env>(node), std::memory_order_release);  // link in
      if constexpr (PV) Pv::wait_node(node, prev);
      // arch_mcs_spin_lock_contended(): acquire, pairs with the predecessor's release of
      // our `locked` (in PV, wait_node() returned with it set already).
      SpinBudget b = forever();
      Env::spin_until(
          SpinSite::qspinlock_node,
          [&] { return node->locked.load(std::memory_order_acquire) != 0; }, b, 0, no_check);
      // A successor may have linked in meanwhile; fetch it now to save time at hand-off.
      // (READ_ONCE of a pointer we dereference: consume, spelled acquire in C++.)
      next = word_node<Env>(node->next.load(std::memory_order_acquire));
    }

    // Head of the queue: wait for owner and pending to go away (*,x,y -> *,0,0). The PV
    // head acquires the lock itself in wait_head_or_lock(). No next head has been chosen
    // yet, so nobody can have set _Q_SLOW_VAL on our lock from here on: the cmpxchg and the
    // byte store below cannot clobber a SLOW marker.
    std::uint32_t val = 0;
    if constexpr (PV) {
      val = Pv::wait_head_or_lock(w_, node);
    } else {
      // atomic_cond_read_acquire: acquire pairs with the owner's release of the locked byte.
      SpinBudget b = forever();
      Env::spin_until(
          SpinSite::qspinlock_head,
          [&] {
            val = w_.val.load(std::memory_order_acquire);
            return (val & kLockedPendingMask) == 0;
          },
          b, 0, no_check);
    }

    // Claim the lock. Alone in the queue (tail still ours): n,0,0 -> 0,0,1 in one cmpxchg
    // (PV may already hold it through stealing protection: n,0,1 -> 0,0,1). A pending bit
    // set meanwhile makes the cmpxchg fail, and that pender then queues behind us.
    // Our node is queued, so the tail names it or a later waiter, never nobody.
    PVLOCK_LOCK_CHECK((val & kTailMask) != 0, "the queue head found an empty tail");
    if ((val & kTailMask) == tail &&
        w_.val.compare_exchange(val, kLockedVal, std::memory_order_relaxed))
      return;

    // Others are queued (or became pending and will queue): set_locked(), one byte store,
    // then hand the MCS "lock" to our successor once it has linked in.
    w_.locked().store(static_cast<std::uint8_t>(kLockedVal), std::memory_order_relaxed);
    if (next == nullptr) {
      SpinBudget b = forever();
      Env::spin_until(
          SpinSite::qspinlock_next,
          [&] {
            next = word_node<Env>(node->next.load(std::memory_order_acquire));
            return next != nullptr;
          },
          b, 0, no_check);
    }
    // arch_mcs_spin_unlock_contended(): release, publishing the lock state to the new head.
    // The PV compile follows it with pv_kick_node(), whose smp_mb__before_atomic() makes this
    // store and the state cmpxchg there fully ordered (a store-buffering pair with
    // pv_wait_node). Without a standalone fence (see above), the store is seq_cst there.
    if constexpr (PV) {
      next->locked.store(1, std::memory_order_seq_cst);
      Pv::kick_node(w_, next);
    } else {
      next->locked.store(1, std::memory_order_release);
    }
  }

  qspin::Word<Env> w_;
};

// The two compiles of the slow path, by their kernel names.
template <Environment Env>
using QueuedSpinlock = Qspinlock<Env, false>;
template <Environment Env>
using PvQueuedSpinlock = Qspinlock<Env, true>;

}  // namespace pvlock
