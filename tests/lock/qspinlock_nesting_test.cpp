// SPDX-License-Identifier: GPL-2.0-only
// Nesting of the qspinlock slow path: a CPU inside the slow path of one lock (task context)
// may be interrupted and enter the slow path of another (softirq, hardirq, NMI), each level
// using the next of the CPU's 4 nodes; a 5th level has no node and spins on the trylock.
//
// The "interrupt" is HookEnv's spin hook: when the thread starts spinning as queue head of
// lock k, it acquires (and releases) lock k+1 right there, before spinning on lock k.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "lock/qspinlock_test_env.hpp"
#include "pvlock/lock/qspinlock.hpp"

namespace pvlock {
namespace {

using testing::HookEnv;

void wait_for(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!flag.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

template <bool PV>
void nest_five_levels() {
  using L = Qspinlock<HookEnv, PV>;
  constexpr int kLevels = 5;
  NativeEnv::policies() = LockPolicies{};
  HookEnv::all_preempted().store(false);
  std::array<L, kLevels> locks;
  std::atomic<bool> held{false}, spinning_without_node{false};

  // Another CPU holds all five locks until the nesting CPU spins at level 5.
  std::thread holder([&] {
    for (auto& l : locks) l.lock();
    held.store(true);
    wait_for(spinning_without_node);
    for (auto& l : locks) l.unlock();
  });
  wait_for(held);

  // Native qspinlock: an owner alone makes a contender take the pending path, which uses no
  // node; a pending waiter on every lock makes the nesting CPU queue.
  std::vector<std::thread> penders;
  if constexpr (!PV) {
    for (auto& l : locks) {
      penders.emplace_back([&l] {
        l.lock();
        l.unlock();
      });
      while (l.value() != (qspin::kLockedVal | qspin::kPendingVal)) std::this_thread::yield();
    }
  }

  NativeEnv::reset_counters();
  const SpinSite head_site = PV ? SpinSite::pv_wait_head_or_lock : SpinSite::qspinlock_head;
  int depth = 1;
  std::array<bool, kLevels + 1> fired{};
  HookEnv::spin_hook() = [&](SpinSite site) {
    if (depth == kLevels) {
      if (site == SpinSite::qspinlock_node) spinning_without_node.store(true);
      return;
    }
    if (site != head_site || fired[depth]) return;
    fired[depth] = true;
    ++depth;  // interrupted: the handler takes the next lock
    locks[depth - 1].lock();
    locks[depth - 1].unlock();
    --depth;
  };
  locks[0].lock();
  locks[0].unlock();
  HookEnv::spin_hook() = nullptr;
  holder.join();
  for (auto& t : penders) t.join();

  const LockEventCounts c = NativeEnv::read_counters();
  EXPECT_TRUE(spinning_without_node.load());
  EXPECT_EQ(c[LockEvent::lock_use_node2], 1u);
  EXPECT_EQ(c[LockEvent::lock_use_node3], 1u);
  EXPECT_EQ(c[LockEvent::lock_use_node4], 1u);
  EXPECT_EQ(c[LockEvent::lock_no_node], 1u);
  EXPECT_EQ(qspin::cpu_nodes<HookEnv>(NativeEnv::cpu()).nodes[0].count, 0u);
  for (auto& l : locks) EXPECT_FALSE(l.is_locked());
}

TEST(QspinlockNesting, NativeUsesFourNodesThenNone) { nest_five_levels<false>(); }
TEST(QspinlockNesting, PvUsesFourNodesThenNone) { nest_five_levels<true>(); }

}  // namespace
}  // namespace pvlock
