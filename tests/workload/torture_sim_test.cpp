// The torture workload in the simulator: many short seeded runs of every registered lock
// find no violation and no stuck run; the busted lock is caught.
#include <gtest/gtest.h>

#include "pvlock/lock/registry.hpp"
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
  return run_sim_torture(o);
}

TEST(SimTorture, EveryLockManySeeds) {
  for (const LockInfo& info : lock_infos<sim::SimEnv>()) {
    if (info.negative_control) continue;
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
