// SPDX-License-Identifier: GPL-2.0-only
// MCS queue spinlock (Mellor-Crummey & Scott; kernel/locking/mcs_spinlock.h). Each waiter
// spins on its own node, so a hand-off moves one cache line instead of a stampede; strictly
// FIFO, so a preempted waiter blocks the lock for everyone queued behind it.
//
// To be BasicLockable (no node argument), nodes come from a small per-CPU pool, like
// qspinlock's four nesting-level nodes, and the holder's node is remembered in the lock for
// unlock(). Nesting deeper than the pool (rare) takes a heap node, counted as lock_no_node.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/check.hpp"

namespace pvlock {

template <Environment Env>
class McsLock {
 public:
  static constexpr const char* kName = "mcs";
  static constexpr int kNodesPerCpu = 4;

  struct alignas(32) Node {
    typename Env::template atomic<std::uintptr_t> next{};
    typename Env::template atomic<std::uint32_t> locked{};
  };
  struct CpuNodes {
    std::array<Node, kNodesPerCpu> nodes{};
    std::uint32_t used_mask = 0;  // touched only by its own CPU, with preemption off
  };

  void lock() {
    Env::preempt_disable();
    Node* node = alloc_node();
    node->next.store(0, std::memory_order_relaxed);
    node->locked.store(0, std::memory_order_relaxed);
    const auto prev = tail_.exchange(to_word(node), std::memory_order_acq_rel);
    PVLOCK_LOCK_CHECK(prev != to_word(node), "one MCS node queued twice");
    if (prev != 0) {
      from_word(prev)->next.store(to_word(node), std::memory_order_release);
      SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
      Env::spin_until(
          SpinSite::mcs_spin, [&] { return node->locked.load(std::memory_order_acquire) != 0; },
          forever, 0, [] { return false; });
    }
    holder_.store(to_word(node), std::memory_order_relaxed);
  }

  bool try_lock() {
    Env::preempt_disable();
    Node* node = alloc_node();
    node->next.store(0, std::memory_order_relaxed);
    node->locked.store(0, std::memory_order_relaxed);
    std::uintptr_t expected = 0;
    if (tail_.compare_exchange(expected, to_word(node), std::memory_order_acquire)) {
      holder_.store(to_word(node), std::memory_order_relaxed);
      return true;
    }
    free_node(node);
    Env::preempt_enable();
    return false;
  }

  void unlock() {
    const auto held = holder_.load(std::memory_order_relaxed);
    Node* node = from_word(held);
    auto next = node->next.load(std::memory_order_acquire);
    if (next == 0) {
      std::uintptr_t expected = held;
      if (tail_.compare_exchange(expected, 0, std::memory_order_release)) {
        free_node(node);
        Env::preempt_enable();
        return;
      }
      // The failed cmpxchg returned the tail: a held MCS lock's queue is never empty.
      PVLOCK_LOCK_CHECK(expected != 0, "MCS unlock of a lock nobody holds");
      // A successor swapped the tail but has not linked in yet.
      SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
      Env::spin_until(
          SpinSite::mcs_spin, [&] { return node->next.load(std::memory_order_acquire) != 0; },
          forever, 0, [] { return false; });
      next = node->next.load(std::memory_order_acquire);
    }
    from_word(next)->locked.store(1, std::memory_order_release);
    free_node(node);
    Env::preempt_enable();
  }

  bool is_locked() const { return tail_.load(std::memory_order_relaxed) != 0; }

 private:
  static std::uintptr_t to_word(Node* n) { return reinterpret_cast<std::uintptr_t>(n); }
  static Node* from_word(std::uintptr_t w) { return reinterpret_cast<Node*>(w); }

  static Node* alloc_node() {
    CpuNodes& pool = Env::template per_cpu<CpuNodes>(Env::cpu());
    for (int i = 0; i < kNodesPerCpu; ++i) {
      if ((pool.used_mask & (1u << i)) == 0) {
        pool.used_mask |= 1u << i;
        return &pool.nodes[i];
      }
    }
    Env::count(LockEvent::lock_no_node);
    return new Node{};
  }
  static void free_node(Node* node) {
    CpuNodes& pool = Env::template per_cpu<CpuNodes>(Env::cpu());
    if (node < pool.nodes.data() || node >= pool.nodes.data() + kNodesPerCpu) {
      delete node;
      return;
    }
    const auto idx = static_cast<std::uint32_t>(node - pool.nodes.data());
    pool.used_mask &= ~(1u << idx);
  }

  typename Env::template atomic<std::uintptr_t> tail_{};
  typename Env::template atomic<std::uintptr_t> holder_{};
};

}  // namespace pvlock
