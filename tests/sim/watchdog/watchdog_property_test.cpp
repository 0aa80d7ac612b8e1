// SPDX-License-Identifier: GPL-2.0-only
// The liveness watchdog never fires on a healthy run: across seeds, short and long runs, and
// 1x to heavily over-committed hosts without any [faults], a vCPU the host keeps off its pCPU
// (and everyone queued behind it) is waiting for a pCPU, not stuck. The fault-injection tests
// (tests/sim/robustness_test.cpp, the CLI's run_drop_kick_* and the mutation suite) check the
// other side: a real stall is still reported.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/host/scenario_run.hpp"

namespace pvlock::sim {
namespace {

const std::string kExample = std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml";

struct Shape {
  const char* what;
  std::vector<std::string> overrides;
};

// Short runs put the watchdog's limit at its 10 ms floor, under the start-up stall of an
// over-committed guest whose queue head waits for a pCPU; many VMs starve every vCPU.
const std::vector<Shape> kShapes = {
    {"5 ms", {"run.duration_ms=5"}},
    {"10 ms", {"run.duration_ms=10"}},
    {"no warm-up, 3 ms", {"run.duration_ms=3", "run.warmup_ms=0"}},
    {"60 ms (the example)", {}},
    {"1x (one VM)", {"vm[0].count=1", "run.duration_ms=10"}},
    {"4x", {"vm[0].count=4", "run.duration_ms=10"}},
    {"32x", {"vm[0].count=32", "run.duration_ms=5", "run.warmup_ms=5"}},
    {"native qspinlock at 2x", {"vm[0].guest.lock=qspinlock", "run.duration_ms=10"}},
};

TEST(WatchdogProperty, NeverFiresWithoutFaults) {
  int runs = 0;
  for (const Shape& shape : kShapes)
    for (int seed = 1; seed <= 6; ++seed) {
      std::vector<std::string> o = shape.overrides;
      o.push_back("run.seed=" + std::to_string(seed));
      const auto j = test::run_file(kExample, o);
      ++runs;
      ASSERT_FALSE(j.contains("liveness")) << shape.what << " seed " << seed << ":\n"
                                           << j["liveness"]["text"].get<std::string>();
    }
  EXPECT_EQ(runs, static_cast<int>(kShapes.size()) * 6);
}

// Sleeping locks with several tasks per vCPU: a mutex or rwsem unlock wakes only the first
// waiter, who may then wait a slice of up to 12 ms for its vCPU while the task running
// there keeps taking the lock by optimistic spinning, and everyone asleep behind it waits
// as long. Unfair, not stuck: the woken waiter is runnable on a guest run queue.
TEST(WatchdogProperty, SleepingLocksWithManyTasksPerVcpuNeverFire) {
  int runs = 0;
  for (const char* lock : {"mutex", "rwsem"})
    for (int tasks : {1, 2, 4, 8})
      for (int seed = 1; seed <= 3; ++seed) {
        const auto j =
            test::run_file(kExample, {std::string("vm[0].guest.lock=") + lock,
                                      "vm[0].workload.tasks_per_vcpu=" + std::to_string(tasks),
                                      "run.seed=" + std::to_string(seed)});
        ++runs;
        ASSERT_FALSE(j.contains("liveness"))
            << lock << ", " << tasks << " tasks per vCPU, seed " << seed << ":\n"
            << j["liveness"]["text"].get<std::string>();
        for (const auto& vm : j["vms"]) EXPECT_GT(vm["ops"].get<std::uint64_t>(), 0u);
      }
  EXPECT_EQ(runs, 2 * 4 * 3);
}

// The 1024-VM over-commit a user tried: each vCPU gets 1/1024 of a pCPU.
TEST(WatchdogProperty, ThousandVmsAreSlowNotStuck) {
  const auto j = test::run_file(kExample, {"vm[0].count=1024", "run.duration_ms=20"});
  EXPECT_FALSE(j.contains("liveness")) << j["liveness"]["text"].get<std::string>();
}

// The watchdog still sees a real stall on the same over-committed host: a kick lost to a
// waiter halted with IRQs off, whose time waiting counts (it is blocked, not runnable).
TEST(WatchdogProperty, LostKickStillFiresWhenOvercommitted) {
  const auto j = test::run_file(kExample, {"faults.drop_kick=0.1", "vm[0].workload.irqs_off=true"});
  ASSERT_TRUE(j.contains("liveness"));
  EXPECT_NE(j["liveness"]["text"].get<std::string>().find("halted in pv_wait with IRQs off"),
            std::string::npos);
}

}  // namespace
}  // namespace pvlock::sim
