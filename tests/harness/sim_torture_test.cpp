// SPDX-License-Identifier: GPL-2.0-only
// The torture workload in the simulator: many short seeded runs of every registered lock
// find no violation and no stuck run; the busted lock is caught.
#include "harness/sim_torture.hpp"

#include <gtest/gtest.h>

#include "harness/run.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"
#include "sim/guest/sim_env.hpp"
#include "workload/torture.hpp"

namespace pvlock::workload {
namespace {

native::TortureResult torture(const std::string& lock, int threads, std::uint64_t seed,
                              double seconds) {
  native::TortureOptions o;
  o.lock = lock;
  o.threads = threads;
  o.readers = 2;
  o.duration_s = seconds;
  o.hold_ns = 100;
  o.long_hold_ns = 20'000;
  o.seed = seed;
  return harness::run_sim_torture(o);
}

TEST(SimTorture, EveryLockManySeeds) {
  for (const LockInfo& info : lock_infos<sim::SimEnv>()) {
    // A kernel variant is the stock kernel code with a change: tortured natively
    // (tests/native) and in the kernel tests; the many seeds here stay with the stock build.
    if (info.negative_control || !info.kernel_change.empty()) continue;
    const std::string lock(info.name);
    // 25 seeds x 2 machine sizes per lock; short runs keep the whole test quick.
    for (std::uint64_t seed = 1; seed <= 25; ++seed) {
      for (int threads : {3, 8}) {
        const native::TortureResult r = torture(lock, threads, seed, 0.0005);
        ASSERT_EQ(r.violations, 0u) << lock << " seed " << seed << " threads " << threads;
        ASSERT_FALSE(r.stuck) << lock << " seed " << seed << " threads " << threads;
        ASSERT_GT(r.acquisitions, 0u) << lock;
      }
    }
  }
}

// 6 vCPUs on 4 pCPUs of a KVM host (1.5x over-commit): vCPUs are preempted while holding and
// while waiting, PV waiters halt and are kicked, PLE exits yield. 60 ms is five host slices,
// enough for every torture thread to get its vCPU back.
const char* kOvercommittedTorture = R"(
[run]
duration_ms = 60
warmup_ms = 5
[machine]
sockets = 1
cores_per_socket = 4
threads_per_core = 1
[host]
scheduler = "cfs"
[[vm]]
name = "vm"
vcpus = 6
[vm.guest]
lock = "qspinlock"
[vm.workload]
type = "torture"
hold_ns = 1000
)";

TEST(SimTorture, EveryLockOnAnOvercommittedHostManySeeds) {
  // Mutual exclusion holds for every lock and seed. Liveness (the watchdog: no task without
  // an acquisition for half the run) is required of the locks built for this host — the PV
  // qspinlock and the sleeping locks. Native FIFO locks and TAS legitimately stall a task
  // for longer here (a queue of preempted waiters, or unfairness): that is the collapse the
  // seeds are about, and the watchdog names it.
  for (const LockInfo& info : lock_infos<sim::SimEnv>()) {
    if (info.negative_control || !info.kernel_change.empty()) continue;  // as above
    const std::string lock(info.name);
    const bool must_progress = lock == "pvqspinlock" || info.kind != LockKind::spin;
    for (int seed = 1; seed <= 20; ++seed) {
      const auto j = harness::run_to_json(scenario::parse_scenario(
          kOvercommittedTorture, "overcommitted_torture.toml",
          {"vm[0].guest.lock=" + lock, "run.seed=" + std::to_string(seed)}));
      const auto& vm = j.at("vms").at(0);
      ASSERT_EQ(vm.at("violations").get<std::uint64_t>(), 0u) << lock << " seed " << seed;
      ASSERT_GT(vm.at("acquisitions").get<std::uint64_t>(), 0u) << lock << " seed " << seed;
      ASSERT_GT(j.at("host").at("preemptions").get<std::uint64_t>(), 0u) << lock;
      if (must_progress) {
        // The watchdog's criterion, not locktorture's "an acquisition in the last tenth of
        // the run": here a sleeping lock's holder can lose its vCPU for a whole host slice
        // (up to ~12 ms at this over-commit), longer than a tenth of 60 ms.
        ASSERT_FALSE(j.contains("liveness")) << lock << " seed " << seed;
        ASSERT_GT(vm.at("per_thread").at("min").get<std::uint64_t>(), 0u)
            << lock << " seed " << seed;
      }
    }
  }
}

TEST(SimTorture, FifoLocksServeEveryone) {
  for (const char* lock : {"ticket", "mcs"}) {
    const native::TortureResult r = torture(lock, 16, 1, 0.002);
    EXPECT_FALSE(r.starvation) << lock;
    EXPECT_GT(r.min_per_thread, 0u) << lock;
  }
}

TEST(SimTorture, CatchesBustedLock) {
  const native::TortureResult r = torture("busted", 8, 1, 0.001);
  EXPECT_GT(r.violations, 0u);
  EXPECT_FALSE(r.success());
}

TEST(SimTorture, UnknownLockThrows) {
  EXPECT_THROW(torture("nope", 2, 1, 0.001), std::invalid_argument);
}

}  // namespace
}  // namespace pvlock::workload
