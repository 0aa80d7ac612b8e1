// SPDX-License-Identifier: GPL-2.0-only
// The paravirt hooks of the qspinlock slow path (kernel/locking/qspinlock_paravirt.h).
//
// The kernel compiles queued_spin_lock_slowpath() twice; the second copy, with these hooks
// filled in, is __pv_queued_spin_lock_slowpath(). Qspinlock<Env, true> is that second
// compile: the same slow path calls the hooks below under `if constexpr (PV)`.
//
// The idea: a waiter spins for a bounded time (SPIN_THRESHOLD), then halts its vCPU
// (pv_wait) and lets the unlocker wake it (pv_kick), so a preempted or waiting vCPU does not
// burn the physical CPU that the lock holder needs.
//   - Non-head waiters halt in pv_wait_node(); when their turn comes, the previous head
//     (now the owner) does not kick them but marks them "hashed" (pv_kick_node), so they are
//     woken only at unlock time, when the lock is actually free.
//   - The queue head spins with the pending bit set (which forbids stealing), then records
//     {lock, node} in the hash table, turns the locked byte into _Q_SLOW_VAL and halts.
//   - The unlocker that finds _Q_SLOW_VAL unhashes the head, releases and kicks its CPU.
//   - Newcomers may steal the lock while the pending bit is clear, i.e. while the queue
//     head is not actively spinning (hybrid PV queued/unfair lock).
//
// That is the v4.8+ lock. Its history is three policy knobs, which a guest profile sets
// (docs/eras.md): v4.2's first pvqspinlock (a23db284fe0d) had no stealing, no pending bit
// in the PV slow path and no early wait, and pv_kick_node() woke a halted successor at the
// MCS hand-off (kick_at_unlock = false); 75d2270280686 (v4.3) deferred that kick to the
// unlock; 1c4941fd53af (v4.5) added one steal attempt and the head's pending bit
// (lock_stealing), cd0272fab785 (v4.5) pv_wait_early (wait_early), 11752adb (v4.8) the
// hybrid stealing loop (hybrid_stealing).
//
// Memory orderings follow upstream; where C++ has no equivalent of a kernel idiom (address
// dependencies, standalone barriers, which ThreadSanitizer does not model) the ordering is
// put on the neighbouring atomic access instead, and the spot says so.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/mutation.hpp"
#include "pvlock/lock/pv_hash.hpp"
#include "pvlock/lock/qspinlock_node.hpp"
#include "pvlock/lock/qspinlock_word.hpp"

namespace pvlock::qspin {

// qspinlock_stat.h's per-CPU pv_kick_time: when this CPU was last kicked (0 = not since it
// began to wait), so the woken CPU can account kick -> wake latency.
template <Environment Env>
struct PvKickTime {
  typename Env::template atomic<std::uintptr_t> ns{};
};
static_assert(sizeof(std::uintptr_t) >= sizeof(std::int64_t), "timestamps in uintptr_t");

template <Environment Env>
struct PvHooks {
  using NodeT = Node<Env>;
  using WordT = Word<Env>;

  static PvLockHash<Env>& lock_hash() { return Env::template global<PvLockHash<Env>>(); }
  static std::uintptr_t lock_key(WordT& w) { return reinterpret_cast<std::uintptr_t>(&w); }

  // pv_init_node()
  static void init_node(NodeT* node) {
    node->cpu.store(static_cast<std::uint32_t>(Env::cpu()), std::memory_order_relaxed);
    node->state.store(kVcpuRunning, std::memory_order_relaxed);
  }

  // queued_spin_trylock() inside the PV slow path.
  //
  // Hybrid (pv_hybrid_queued_unfair_trylock, 11752adb): keep trying to steal while there
  // are queued waiters but the pending bit is clear (the queue head is halted or preempted
  // rather than spinning); go and queue as soon as the queue is empty or the head spins.
  // With hybrid_stealing off, the kernel before that commit: one steal attempt
  // (pv_queued_spin_steal_lock) whenever locked and pending are clear, then queue. With
  // lock_stealing off (before 1c4941fd53af), the generic queued_spin_trylock(): only a
  // completely free word, so nobody passes a queued waiter.
  static bool trylock(WordT& w) {
    const QspinlockPolicy& q = Env::policies().qspinlock;
    if (!q.lock_stealing) return trylock_free(w);
    if (!q.hybrid_stealing) return steal_once(w);
    for (;;) {
      std::uint32_t val = 0;
      SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
      Env::spin_until(
          SpinSite::qspinlock_node,
          [&] {
            val = w.val.load(std::memory_order_relaxed);
            return (val & kLockedPendingMask) == 0 || (val & kTailMask) == 0 ||
                   (val & kPendingMask) != 0;
          },
          forever, 0, [] { return false; });
      if ((val & kLockedPendingMask) == 0 && steal(w)) return true;
      if ((val & kTailMask) == 0 || (val & kPendingMask) != 0) return false;
    }
  }

  // The condition under which trylock() can succeed: what the lock_no_node fallback waits
  // for between attempts.
  static bool may_steal(std::uint32_t val) {
    if (!Env::policies().qspinlock.lock_stealing) return val == 0;
    return (val & kLockedPendingMask) == 0;
  }

  // pv_wait_node(): wait for our MCS `locked`, halting after SPIN_THRESHOLD iterations or as
  // soon as the predecessor is seen not running (pv_wait_early, looked at on the first
  // iteration and every PV_PREV_CHECK_MASK + 1 after).
  static void wait_node(NodeT* node, NodeT* prev) {
    const QspinlockPolicy& q = Env::policies().qspinlock;
    const std::uint32_t period = q.wait_early == WaitEarlyRule::never ? 0 : q.prev_check_mask + 1;
    for (;;) {
      SpinBudget budget{q.spin_threshold};
      bool by_preempted = false;  // which clause of pv_wait_early() fired (statistics only)
      const SpinResult r = Env::spin_until(
          SpinSite::pv_wait_node, [&] { return node->locked.load(std::memory_order_relaxed) != 0; },
          budget, period, [&] { return wait_early(prev, q.wait_early, by_preempted); });
      if (r == SpinResult::ready) return;  // the caller's acquire load follows
      const bool early = r == SpinResult::early;
      auto count_halt = [&] {
        Env::count(LockEvent::pv_wait_node);
        if (early) Env::count(LockEvent::pv_wait_early);
        if (early && by_preempted) Env::count(LockEvent::pv_wait_early_preempted);
      };

      // smp_store_mb(state, halted), then re-read locked: paired with the previous head's
      // "store next->locked = 1; MB; cmpxchg state halted -> hashed" in kick_node(), so
      // either we see locked, or it sees halted and takes over our hashing.
      if constexpr (mutation<Env> == Mutation::halted_store_after_check) {
        // Mutant: check first, publish "halted" after (the store-buffering race).
        if (node->locked.load(std::memory_order_seq_cst) == 0) {
          node->state.exchange(kVcpuHalted, std::memory_order_seq_cst);
          count_halt();
          wait(&node->state, kVcpuHalted);
        }
      } else {
        node->state.exchange(kVcpuHalted, std::memory_order_seq_cst);
        if (node->locked.load(std::memory_order_seq_cst) == 0) {
          count_halt();
          wait(&node->state, kVcpuHalted);
        }
      }
      // Back to running unless kick_node() made us "hashed": keep that, so that
      // wait_head_or_lock() knows the lock is already hashed and SLOW on our behalf.
      std::uint8_t halted = kVcpuHalted;
      node->state.compare_exchange(halted, kVcpuRunning, std::memory_order_seq_cst);
      // Woken (or not halted at all) without the MCS lock: spin again rather than halting
      // at once, halting and kicking being far dearer than a short spin.
      if (node->locked.load(std::memory_order_relaxed) == 0)
        Env::count(LockEvent::pv_spurious_wakeup);
    }
  }

  // pv_kick_node(): called by the new owner right after it set next->locked = 1. A halted
  // successor is not woken now (it would only spin on a held lock) but advanced to "hashed":
  // the owner sets _Q_SLOW_VAL and hashes the lock for it, so its unlock will kick it.
  //
  // Before 75d2270280686 (kick_at_unlock off) there was no "hashed" state: the owner set the
  // successor running and kicked it if it had halted, so that it would spin as the head --
  // on a lock still held, halting and being kicked a second time if the hold was long.
  static void kick_node(WordT& w, NodeT* node) {
    if (!Env::policies().qspinlock.kick_at_unlock) {
      // xchg(): ordered against pv_wait_node's "store halted; load locked" as the cmpxchg
      // below is (seq_cst here, the caller's store of next->locked seq_cst too).
      if (node->state.exchange(kVcpuRunning, std::memory_order_seq_cst) == kVcpuHalted)
        kick(static_cast<int>(node->cpu.load(std::memory_order_relaxed)));
      return;
    }
    // The kernel's smp_mb__before_atomic() + cmpxchg_relaxed() order the store of
    // next->locked before the read of the state whether or not the cmpxchg succeeds. Here
    // the caller's store of next->locked and this cmpxchg are both seq_cst, which gives the
    // same guarantee against pv_wait_node's seq_cst "store halted; load locked".
    std::uint8_t halted = kVcpuHalted;
    if (!node->state.compare_exchange(halted, kVcpuHashed, std::memory_order_seq_cst)) return;
    // We hold the lock and are the one who will unlock it: plain stores suffice.
    w.locked().store(kSlowVal, std::memory_order_relaxed);
    (void)lock_hash().hash(lock_key(w), node_word<Env>(node));
  }

  // pv_wait_head_or_lock(): the queue head acquires the lock itself, spinning with the
  // pending bit set, hashing and halting when the spin runs out. Returns the lock value
  // with the locked bit set (non-zero: "acquired", as upstream).
  //
  // Without lock_stealing this is the v4.2-4.4 pv_wait_head(): no pending bit (there is no
  // stealer to hold off), and the head takes the freed lock with a cmpxchg of the locked
  // byte. Upstream pv_wait_head() only returned and let the generic code take the lock; with
  // nobody able to pass a queued waiter the two are the same acquisition.
  static std::uint32_t wait_head_or_lock(WordT& w, NodeT* node) {
    const QspinlockPolicy& q = Env::policies().qspinlock;
    const bool set_pending = q.lock_stealing;
    // kick_node() already hashed the lock on our behalf: never hash it a second time.
    bool hashed = node->state.load(std::memory_order_relaxed) == kVcpuHashed;
    typename PvLockHash<Env>::Slot* lp = nullptr;

    Env::count(LockEvent::lock_slowpath);  // PV counts slow-path acquisitions here

    for (std::uint64_t waitcnt = 0;; ++waitcnt) {
      // Running again: successors' wait-early checks look at this.
      node->state.store(kVcpuRunning, std::memory_order_relaxed);
      // Pending set = "the head is spinning": no stealing meanwhile.
      if constexpr (mutation<Env> != Mutation::no_pending_while_head_spins)
        if (set_pending) w.pending().store(1, std::memory_order_relaxed);
      SpinBudget budget{q.spin_threshold};
      for (;;) {
        const SpinResult r = Env::spin_until(
            SpinSite::pv_wait_head_or_lock,
            [&] { return w.locked().load(std::memory_order_relaxed) == 0; }, budget, 0,
            [] { return false; });
        if (r == SpinResult::ready && trylock_clear_pending(w, set_pending)) return acquired(w);
        if (budget.iters == 0) break;
        --budget.iters;  // the failed attempt used one iteration
      }
      if (set_pending) w.pending().store(0, std::memory_order_relaxed);  // clear_pending()

      if constexpr (mutation<Env> == Mutation::no_hash_before_halt) {
        // Mutant: halt at once, on the lock as it is (held), with no hash entry and no
        // _Q_SLOW_VAL for the unlocker to see.
        node->state.store(kVcpuHashed, std::memory_order_relaxed);
        Env::count(LockEvent::pv_wait_head);
        wait(&w.locked(), static_cast<std::uint8_t>(kLockedVal));
        continue;
      }
      if (!hashed) {  // once
        hashed = true;
        lp = lock_hash().hash(lock_key(w), node_word<Env>(node));
        // Hash before _Q_SLOW_VAL becomes visible (the xchg is a full barrier), so an
        // unlocker that sees SLOW (and then issues its rmb) finds the entry.
        if (w.locked().exchange(kSlowVal, std::memory_order_seq_cst) == 0) {
          // The lock was free after all and is now ours: undo SLOW and the entry.
          w.locked().store(static_cast<std::uint8_t>(kLockedVal), std::memory_order_relaxed);
          lp->store(0, std::memory_order_relaxed);
          return acquired(w);
        }
      }
      node->state.store(kVcpuHashed, std::memory_order_relaxed);
      Env::count(LockEvent::pv_wait_head);
      if (waitcnt != 0) Env::count(LockEvent::pv_wait_again);
      wait(&w.locked(), kSlowVal);
      // Woken: the unlocker released before kicking, but a stealer may have been quicker;
      // then the loop spins (and possibly halts) again.
    }
  }

  // __pv_queued_spin_unlock(): release unless the locked byte says SLOW.
  static void unlock(WordT& w) {
    // cmpxchg_release 1 -> 0. Its failure ordering is acquire (acq_rel), standing in for
    // the smp_rmb() the kernel issues in the slow path after seeing _Q_SLOW_VAL.
    std::uint8_t locked = static_cast<std::uint8_t>(kLockedVal);
    if (w.locked().compare_exchange(locked, 0, std::memory_order_acq_rel)) return;
    unlock_slowpath(w, locked);
  }

  // __pv_queued_spin_unlock_slowpath()
  static void unlock_slowpath(WordT& w, std::uint8_t locked) {
    if (locked != kSlowVal) {
      // The kernel WARNs about a corrupted lock value and leaves the lock alone.
      std::fprintf(stderr, "pvqspinlock: lock %p has corrupted value 0x%x!\n",
                   static_cast<void*>(&w), w.val.load(std::memory_order_relaxed));
      return;
    }
    // smp_rmb(): read the hash entry only after seeing SLOW (pairs with the full-barrier
    // xchg that set SLOW after hashing). Provided by unlock()'s acquire failure ordering.
    NodeT* node = word_node<Env>(lock_hash().unhash(lock_key(w)));
    // Unhash before releasing, or a new SLOW round of this lock could find a second entry.
    w.locked().store(0, std::memory_order_release);
    // The lock may be reused from here on; the node (per-CPU memory) stays valid.
    Env::count(LockEvent::pv_kick_unlock);
    if constexpr (mutation<Env> == Mutation::no_kick_at_unlock) return;  // mutant
    kick(static_cast<int>(node->cpu.load(std::memory_order_relaxed)));
  }

  // pv_wait() and pv_kick() with the latency accounting of qspinlock_stat.h.
  static void wait(typename Env::template atomic<std::uint8_t>* ptr, std::uint8_t val) {
    auto& kicked_at = Env::template per_cpu<PvKickTime<Env>>(Env::cpu()).ns;
    kicked_at.store(0, std::memory_order_relaxed);
    Env::pv_wait(ptr, val);
    const std::uintptr_t t = kicked_at.load(std::memory_order_relaxed);
    if (t != 0) {
      Env::count(LockEvent::pv_latency_wake, elapsed_since(t));
      Env::count(LockEvent::pv_kick_wake);
    }
  }
  static void kick(int cpu) {
    const std::int64_t start = Env::now_ns();
    // max(.., 1): a kick at time 0 (a simulator's epoch) must still read as "kicked".
    Env::template per_cpu<PvKickTime<Env>>(cpu).ns.store(
        static_cast<std::uintptr_t>(start > 0 ? start : 1), std::memory_order_relaxed);
    Env::pv_kick(cpu);
    Env::count(LockEvent::pv_latency_kick, elapsed_since(static_cast<std::uintptr_t>(start)));
  }

 private:
  // cmpxchg_acquire on the locked byte 0 -> 1.
  static bool steal(WordT& w) {
    std::uint8_t zero = 0;
    if (!w.locked().compare_exchange(zero, static_cast<std::uint8_t>(kLockedVal),
                                     std::memory_order_acquire))
      return false;
    Env::count(LockEvent::pv_lock_stealing);
    return true;
  }
  static bool steal_once(WordT& w) {
    const std::uint32_t val = w.val.load(std::memory_order_relaxed);
    return (val & kLockedPendingMask) == 0 && steal(w);
  }
  // queued_spin_trylock(): 0 -> locked on the whole word.
  static bool trylock_free(WordT& w) {
    std::uint32_t val = w.val.load(std::memory_order_relaxed);
    return val == 0 && w.val.compare_exchange(val, kLockedVal, std::memory_order_acquire);
  }

  // pv_wait_early(). `by_preempted` tells whether the vcpu_is_preempted() clause decided
  // (prev's node still says running): seed 000 measured that share (6 %).
  static bool wait_early(NodeT* prev, WaitEarlyRule rule, bool& by_preempted) {
    switch (rule) {
      case WaitEarlyRule::prev_halted:
        return prev->state.load(std::memory_order_relaxed) != kVcpuRunning;
      case WaitEarlyRule::prev_halted_or_preempted:
        if (prev->state.load(std::memory_order_relaxed) != kVcpuRunning) return true;
        return by_preempted = Env::vcpu_is_preempted(
                   static_cast<int>(prev->cpu.load(std::memory_order_relaxed)));
      case WaitEarlyRule::never:
        return false;
    }
    return false;
  }

  // trylock_clear_pending(): with pending set nobody else may take the lock, but the
  // pending-bit test of a stealer is no barrier, hence a real cmpxchg (pending -> locked,
  // on the 16-bit locked+pending half) rather than a plain store. Without the pending bit
  // (no lock_stealing) the same cmpxchg takes a free locked+pending half.
  static bool trylock_clear_pending(WordT& w, bool pending_set) {
    if (w.locked().load(std::memory_order_relaxed) != 0) return false;
    std::uint16_t expected = static_cast<std::uint16_t>(pending_set ? kPendingVal : 0);
    return w.locked_pending().compare_exchange(expected, static_cast<std::uint16_t>(kLockedVal),
                                               std::memory_order_acquire);
  }

  static std::uint32_t acquired(WordT& w) {
    return w.val.load(std::memory_order_relaxed) | kLockedVal;
  }

  static std::uint64_t elapsed_since(std::uintptr_t t) {
    const std::int64_t now = Env::now_ns();
    const auto then = static_cast<std::int64_t>(t);
    return now > then ? static_cast<std::uint64_t>(now - then) : 0;
  }
};

}  // namespace pvlock::qspin
