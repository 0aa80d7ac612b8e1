// SPDX-License-Identifier: GPL-2.0-only
// Optimistic spin queue (kernel/locking/osq_lock.c): the MCS-style queue that mutex and
// rwsem spinners must join before spinning on the lock owner, so that only the queue head
// hammers the owner's cache line. Unlike a plain MCS lock a waiter may *leave* the queue:
// when its CPU must reschedule (need_resched) or, since seed 003, when the vCPU of its
// predecessor is preempted -- spinning behind a descheduled vCPU only burns the host's time.
//
// Layout, as in the kernel: one node per CPU (a task is in at most one OSQ at a time, since
// preemption is disabled while it spins), and a 32-bit tail holding the tail node's CPU + 1,
// 0 meaning "empty". Nodes are static per-CPU storage, which is what makes the unqueue
// protocol legal: a predecessor's node may be touched with cmpxchg even after it has left.
//
// Leaving the queue (unqueue) is the three-step dance of osq_lock.c:
//   A: stabilise prev -- cmpxchg prev->next from us to NULL, so that prev, when it unlocks or
//      unqueues, waits for a new next pointer instead of handing the lock to us. Failure
//      means prev is handing us the lock (we see `locked`), or prev itself is unqueueing and
//      will write us a new prev (its step C); reload and retry.
//   B: stabilise next -- either move the tail back from us to prev (we were last), or take
//      our next pointer out of our node (xchg) once the successor has linked in.
//   C: splice -- next->prev = prev, prev->next = next.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/check.hpp"

namespace pvlock {

template <Environment Env>
class Osq {
 public:
  // struct optimistic_spin_node: one per CPU, on its own cache line.
  struct alignas(64) Node {
    typename Env::template atomic<std::uintptr_t> next{};  // Node*
    typename Env::template atomic<std::uintptr_t> prev{};  // Node*
    typename Env::template atomic<std::uint32_t> locked{};
    typename Env::template atomic<std::uint32_t> cpu{};  // encoded: CPU + 1
  };

  static constexpr std::uint32_t kUnlocked = 0;  // OSQ_UNLOCKED_VAL

  // osq_lock(): true once this CPU owns the queue; false if it gave up (need_resched, or the
  // predecessor's vCPU is preempted with policies().osq.break_on_prev_preempted). The caller
  // must have preemption disabled.
  bool lock() {
    Node* node = this_node();
    const std::uint32_t curr = encode_cpu(Env::cpu());
    node->locked.store(0, std::memory_order_relaxed);
    node->next.store(0, std::memory_order_relaxed);
    node->cpu.store(curr, std::memory_order_relaxed);

    // Fully ordered xchg: acquire pairs with the previous owner's release of the tail, release
    // publishes the node fields just initialised.
    const std::uint32_t old = tail_.exchange(curr, std::memory_order_acq_rel);
    if (old == kUnlocked) return true;
    PVLOCK_LOCK_CHECK(old != curr, "this CPU queued twice on one OSQ");

    Env::count(LockEvent::osq_lock);
    Node* prev = decode_cpu(old);
    node->prev.store(to_word(prev), std::memory_order_relaxed);
    // Release: node->prev must be visible before prev->next, or a predecessor's unqueue
    // step C (which rewrites our prev) could be overtaken by this older store.
    prev->next.store(to_word(node), std::memory_order_release);

    // Spin on our own node. need_resched() and the predecessor's preempted flag are the
    // reasons to give up; upstream reads both on every iteration, hence period 1 (which also
    // tells the simulator to charge a vcpu_is_preempted() call per iteration).
    const bool break_on_preempted = Env::policies().osq.break_on_prev_preempted;
    bool prev_preempted = false;
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    const SpinResult r = Env::spin_until(
        SpinSite::osq_lock, [&] { return node->locked.load(std::memory_order_acquire) != 0; },
        forever, 1,
        [&] {
          if (Env::need_resched()) return true;
          if (!break_on_preempted) return false;
          // The PREDECESSOR's vCPU (node_cpu(node->prev)), not the lock owner's: a preempted
          // waiter ahead of us will not pass the lock on any time soon.
          prev_preempted = Env::vcpu_is_preempted(
              node_cpu(from_word(node->prev.load(std::memory_order_relaxed))));
          return prev_preempted;
        });
    if (r == SpinResult::ready) {
      Env::count(LockEvent::osq_lock_acquired);
      return true;
    }
    return unqueue(node, prev_preempted);
  }

  // osq_unlock(): pass the queue to the next waiter, or empty it.
  void unlock() {
    const std::uint32_t curr = encode_cpu(Env::cpu());
    std::uint32_t expected = curr;
    if (tail_.compare_exchange(expected, kUnlocked, std::memory_order_release)) return;
    // The failed cmpxchg returned the tail: a holder's OSQ is never empty.
    PVLOCK_LOCK_CHECK(expected != kUnlocked, "osq_unlock() of an OSQ nobody holds");

    Node* node = this_node();
    if (Node* next = from_word(node->next.exchange(0, std::memory_order_acq_rel))) {
      next->locked.store(1, std::memory_order_release);
      return;
    }
    if (Node* next = wait_next(node, nullptr)) next->locked.store(1, std::memory_order_release);
  }

  bool is_locked() const { return tail_.load(std::memory_order_relaxed) != kUnlocked; }
  // For tests: the encoded tail (CPU + 1 of the last queued node, 0 = empty).
  std::uint32_t tail() const { return tail_.load(std::memory_order_relaxed); }
  static Node& node_of(int cpu) { return Env::template per_cpu<Node>(cpu); }
  static std::uint32_t encode_cpu(int cpu) { return static_cast<std::uint32_t>(cpu) + 1; }

 private:
  static int node_cpu(const Node* n) {
    return static_cast<int>(n->cpu.load(std::memory_order_relaxed)) - 1;
  }
  static Node* decode_cpu(std::uint32_t encoded) {
    return &Env::template per_cpu<Node>(static_cast<int>(encoded) - 1);
  }
  static Node* this_node() { return &Env::template per_cpu<Node>(Env::cpu()); }
  static std::uintptr_t to_word(Node* n) { return reinterpret_cast<std::uintptr_t>(n); }
  static Node* from_word(std::uintptr_t w) { return reinterpret_cast<Node*>(w); }

  // The unqueue path of osq_lock(). Returns true if the lock was granted after all.
  bool unqueue(Node* node, bool prev_preempted) {
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    auto never = [] { return false; };

    // Step A: undo prev->next = node.
    Node* prev = nullptr;
    for (;;) {
      prev = from_word(node->prev.load(std::memory_order_relaxed));
      std::uintptr_t expected = to_word(node);
      if (prev->next.load(std::memory_order_relaxed) == to_word(node) &&
          prev->next.compare_exchange(expected, 0, std::memory_order_acq_rel))
        break;
      // The cmpxchg only fails against prev's unlock (it took our pointer out of its node and
      // is about to set our `locked`) or prev's own unqueue (its step C will write us a new
      // prev, and point that one's next at us).
      if (node->locked.load(std::memory_order_acquire) != 0) {
        Env::count(LockEvent::osq_lock_acquired);
        return true;
      }
      Env::spin_until(
          SpinSite::osq_lock,
          [&] {
            return node->locked.load(std::memory_order_acquire) != 0 ||
                   node->prev.load(std::memory_order_relaxed) != to_word(prev) ||
                   prev->next.load(std::memory_order_relaxed) == to_word(node);
          },
          forever, 0, never);
    }

    // Step B: find a stable next, or hand the tail back to prev.
    Node* next = wait_next(node, prev);
    Env::count(LockEvent::osq_unqueue);
    if (prev_preempted) Env::count(LockEvent::osq_unqueue_preempted);
    if (next == nullptr) return false;

    // Step C: unlink. prev waits for a new prev->next (step A left it NULL) and next waits in
    // its own step A or spin (our next is NULL), so both are stable.
    next->prev.store(to_word(prev), std::memory_order_relaxed);
    prev->next.store(to_word(next), std::memory_order_release);
    return false;
  }

  // osq_wait_next(): a stable node->next for unlock() (prev == nullptr) or unqueue(). Returns
  // nullptr if we were last and moved the tail back to prev (or to empty).
  Node* wait_next(Node* node, Node* prev) {
    const std::uint32_t curr = encode_cpu(Env::cpu());
    const std::uint32_t old =
        prev != nullptr ? prev->cpu.load(std::memory_order_relaxed) : kUnlocked;
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    for (;;) {
      std::uint32_t expected = curr;
      if (tail_.load(std::memory_order_relaxed) == curr &&
          tail_.compare_exchange(expected, old, std::memory_order_acquire))
        return nullptr;  // prev will now see the tail and finish its unlock/unqueue
      // xchg, not a plain read: leaving the pointer in place would let the successor's step A
      // succeed against us while we use it.
      if (node->next.load(std::memory_order_relaxed) != 0) {
        if (Node* next = from_word(node->next.exchange(0, std::memory_order_acq_rel))) return next;
      }
      // A successor swapped the tail but has not linked in yet (or is unqueueing itself).
      Env::spin_until(
          SpinSite::osq_lock,
          [&] {
            return tail_.load(std::memory_order_relaxed) == curr ||
                   node->next.load(std::memory_order_relaxed) != 0;
          },
          forever, 0, [] { return false; });
    }
  }

  typename Env::template atomic<std::uint32_t> tail_{kUnlocked};
};

}  // namespace pvlock
