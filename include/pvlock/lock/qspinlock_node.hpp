// SPDX-License-Identifier: GPL-2.0-only
// The per-CPU MCS queue nodes of qspinlock (kernel/locking/qspinlock.c: qnodes[]).
//
// Each CPU owns _Q_MAX_NODES = 4 nodes, one per context that can be inside the slow path at
// once (task, softirq, hardirq, NMI); node 0's `count` says how many are in use. A node is
// only needed while its CPU waits in the queue: the slow path takes it on entry and gives it
// back on exit, so the lock itself never refers to a node once it is held.
//
// The node is the kernel's struct qnode with PARAVIRT_SPINLOCKS: the 16-byte mcs_spinlock
// padded to 32 bytes, the padding holding pv_node's `cpu` and `state`. Native and PV
// qspinlocks share the same per-CPU array, as the kernel's two compiles of the slow path do.
#pragma once

#include <array>
#include <cstdint>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/qspinlock_word.hpp"

namespace pvlock::qspin {

// enum vcpu_state of qspinlock_paravirt.h.
enum VcpuState : std::uint8_t {
  kVcpuRunning = 0,
  kVcpuHalted = 1,  // a non-head waiter halted in pv_wait_node()
  kVcpuHashed = 2,  // a queue head halted with its lock in the PV hash table
};

template <Environment Env>
struct alignas(32) Node {
  // struct mcs_spinlock
  typename Env::template atomic<std::uintptr_t> next{};   // successor's node, 0 = none yet
  typename Env::template atomic<std::uint32_t> locked{};  // 1 = we are the queue head
  std::uint32_t count = 0;  // node 0 only: nodes in use; touched by its own CPU only
  // struct pv_node (in the PARAVIRT_SPINLOCKS padding); unused by the native slow path.
  typename Env::template atomic<std::uint32_t> cpu{};   // owner CPU, for pv_kick/preempted
  typename Env::template atomic<std::uint8_t> state{};  // VcpuState
};

template <Environment Env>
struct PerCpuNodes {
  std::array<Node<Env>, kMaxNodes> nodes{};
};

template <Environment Env>
PerCpuNodes<Env>& cpu_nodes(int cpu) {
  return Env::template per_cpu<PerCpuNodes<Env>>(cpu);
}

// decode_tail(): the node a tail value names.
template <Environment Env>
Node<Env>* decode_tail(std::uint32_t tail) {
  return &cpu_nodes<Env>(tail_cpu(tail)).nodes[tail_idx(tail)];
}

template <Environment Env>
std::uintptr_t node_word(Node<Env>* n) {
  return reinterpret_cast<std::uintptr_t>(n);
}
template <Environment Env>
Node<Env>* word_node(std::uintptr_t w) {
  return reinterpret_cast<Node<Env>*>(w);
}

}  // namespace pvlock::qspin
