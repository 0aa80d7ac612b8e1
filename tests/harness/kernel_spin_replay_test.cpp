// SPDX-License-Identifier: GPL-2.0-only
// The spin replay of the kernel:* locks in the simulator (src/kernel spin_replay.hpp): runs
// stay correct, every replayed loop kept its recorded pattern (no iteration was charged that
// the C code did not run), and a run stays a deterministic function of its seed.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "harness/sim_torture.hpp"
#include "scenario/parse.hpp"

#ifdef PVLOCK_KERNEL_LOCKS
#include "pvlock/kernel/spin_replay.hpp"

namespace pvlock::harness {
namespace {

TEST(KernelSpinReplay, TortureKeepsEveryLoopsPattern) {
  for (const char* lock : {"kernel:qspinlock", "kernel:pvqspinlock", "kernel:osq"}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      native::TortureOptions o;
      o.lock = lock;
      o.threads = 24;
      o.duration_s = 0.003;
      o.hold_ns = 200;
      o.long_hold_ns = 50'000;
      o.seed = seed;
      const std::uint64_t before = kernel::replay_deviations();
      const native::TortureResult r = run_sim_torture(o);
      EXPECT_EQ(r.violations, 0u) << lock << " seed " << seed;
      EXPECT_FALSE(r.stuck) << lock << " seed " << seed;
      EXPECT_GT(r.acquisitions, 0u) << lock;
      EXPECT_EQ(kernel::replay_deviations(), before) << lock << " seed " << seed;
    }
  }
}

TEST(KernelSpinReplay, OvercommitRunIsDeterministicAndHalts) {
  const auto sc = scenario::load_scenario_file(
      std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml",
      {"vm[0].guest.lock=kernel:pvqspinlock", "run.duration_ms=20"});
  const std::uint64_t before = kernel::replay_deviations();
  auto a = run_to_json(sc);
  auto b = run_to_json(sc);
  a.erase("perf");
  b.erase("perf");
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_GT(a["counters"]["pv_wait_node"].get<std::uint64_t>(), 0u);
  EXPECT_GT(a["counters"]["pv_kick_unlock"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(kernel::replay_deviations(), before);
}

}  // namespace
}  // namespace pvlock::harness
#endif
