// SPDX-License-Identifier: GPL-2.0-only
// Kernel variants (src/kernel/variants.cmake): the default variant wait-early-preempted --
// 6.1's qspinlock_paravirt.h with pvlock's semantic patch restoring the 2017 pv_wait_early()
// rule -- is built beside the stock files, listed, selectable, separate from them, and its
// code takes pv_wait_early where the rule says.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "harness/run.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"

namespace pvlock {
namespace {

constexpr std::string_view kVariant = "wait-early-preempted";

bool built() {
  for (const kernel::NotBuilt& v : kernel::kNotBuilt)
    if (v.name != nullptr && v.name == kVariant) return false;
  return true;
}

#define SKIP_UNLESS_BUILT()                             \
  if (!built())                                         \
  GTEST_SKIP() << "kernel variant " << kVariant << ": " \
               << missing_lock_reason("kernel:wait-early-preempted/pvqspinlock")

TEST(KernelVariants, EachVariantListsItsThreeLocksWithTheChange) {
  SKIP_UNLESS_BUILT();
  for (const char* lock : {"qspinlock", "pvqspinlock", "osq"}) {
    const std::string name = "kernel:" + std::string(kVariant) + "/" + lock;
    bool found = false;
    for (const LockInfo& info : lock_infos<NativeEnv>()) {
      if (info.name != name) continue;
      found = true;
      EXPECT_EQ(info.kernel_version, PVLOCK_KERNEL_VERSION) << name;
      EXPECT_NE(info.kernel_change.find("wait-early-preempted.cocci"), std::string_view::npos)
          << name << ": " << info.kernel_change;
      EXPECT_NE(info.kernel_change.find("semantic patch"), std::string_view::npos) << name;
    }
    EXPECT_TRUE(found) << name;
  }
  // The stock locks carry no change.
  for (const LockInfo& info : lock_infos<NativeEnv>()) {
    if (info.name == "kernel:pvqspinlock") {
      EXPECT_TRUE(info.kernel_change.empty());
    }
  }
}

TEST(KernelVariants, ALockNameOfAVariantNotBuiltSaysWhy) {
  EXPECT_EQ(missing_lock_reason("kernel:no-such-variant/pvqspinlock"),
            "no such lock in this build");
  for (const kernel::NotBuilt& v : kernel::kNotBuilt) {
    if (v.name != nullptr) {
      EXPECT_EQ(missing_lock_reason("kernel:" + std::string(v.name) + "/osq"), v.reason);
    }
  }
}

// NativeEnv on which every vCPU is preempted, with a kernel instance and counters of its
// own: a queued waiter's predecessor is always "preempted" when pv_wait_early() looks.
struct PreemptedEnv : NativeEnv {
  static inline std::array<std::atomic<std::uint64_t>, kLockEventCount> events{};
  static bool vcpu_is_preempted(int) { return true; }
  static void count(LockEvent e, std::uint64_t n = 1) {
    events[static_cast<std::size_t>(e)].fetch_add(n, std::memory_order_relaxed);
  }
  static std::uint64_t get(LockEvent e) {
    return events[static_cast<std::size_t>(e)].load(std::memory_order_relaxed);
  }
  template <class T>
  static T& global() {
    static T object{};
    return object;
  }
};
static_assert(Environment<PreemptedEnv>);

// Threads take `lock` until enough queued waiters have halted in pv_wait_node (or a
// generous cap passes); checks exclusion on the way.
template <class L>
void contend(L& lock, int threads) {
  long counter = 0;
  std::atomic<long> sections{0};
  std::atomic<bool> stop{false};
  const auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      NativeEnv::bind_cpu(t);
      long mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 50; ++i) {
          lock.lock();
          counter = counter + 1;
          lock.unlock();
        }
        mine += 50;
        if (t == 0 && (PreemptedEnv::get(LockEvent::pv_wait_node) >= 20 ||
                       std::chrono::steady_clock::now() > cap))
          stop.store(true);
      }
      sections.fetch_add(mine);
      NativeEnv::unbind_cpu();
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(counter, sections.load());
}

// The 2017 rule: a waiter whose predecessor's vCPU is preempted halts at its first check
// (loop == SPIN_THRESHOLD, a multiple of PV_PREV_CHECK_MASK + 1), so every halt in
// pv_wait_node() is an early one. The stock 6.1 rule never asks vcpu_is_preempted().
TEST(KernelVariants, The2017RuleHaltsEveryWaiterBehindAPreemptedPredecessorEarly) {
  SKIP_UNLESS_BUILT();
  const bool found = with_lock<PreemptedEnv>("kernel:wait-early-preempted/pvqspinlock",
                                             [&]<class L>(const LockInfo&) {
                                               L lock;
                                               contend(lock, 6);
                                             });
  ASSERT_TRUE(found);
  const std::uint64_t node = PreemptedEnv::get(LockEvent::pv_wait_node);
  const std::uint64_t early = PreemptedEnv::get(LockEvent::pv_wait_early);
  ASSERT_GT(node, 0u) << "no queued waiter halted: the test checked nothing";
  EXPECT_EQ(early, node);
}

// Seed 000's scenario (three 80-vCPU VMs on 80 pCPUs, ebizzy), shortened, stock kernel code
// against the variant: queued waiters find preempted predecessors, and only the 2017 rule
// halts early behind them (a run is deterministic, so the comparison is exact per seed).
nlohmann::ordered_json run_seed000(const std::string& lock, int seed) {
  const std::string path = std::string(PVLOCK_SOURCE_DIR) + "/experiments/seed000/ebizzy-3vm.toml";
  return harness::run_to_json(scenario::load_scenario_file(
      path, {"vm[0].guest.lock=" + lock, "run.seed=" + std::to_string(seed), "run.duration_ms=20",
             "run.warmup_ms=20"}));
}

std::uint64_t counter(const nlohmann::ordered_json& run, const char* name) {
  return run.at("counters").value(name, std::uint64_t{0});
}

TEST(KernelVariants, The2017RuleTakesPvWaitEarlyMoreOftenInSeed000sScenario) {
  SKIP_UNLESS_BUILT();
  for (int seed = 1; seed <= 2; ++seed) {
    const auto stock = run_seed000("kernel:pvqspinlock", seed);
    const auto rule2017 = run_seed000("kernel:wait-early-preempted/pvqspinlock", seed);
    EXPECT_GT(counter(rule2017, "pv_wait_early"), 2 * counter(stock, "pv_wait_early"))
        << "seed " << seed;
    EXPECT_GT(counter(rule2017, "pv_wait_node"), 0u) << "seed " << seed;
    // Halting early is what the rule changes: the variant's halts are all early ones.
    EXPECT_EQ(counter(rule2017, "pv_wait_early"), counter(rule2017, "pv_wait_node"))
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace pvlock
