// SPDX-License-Identifier: GPL-2.0-only
// Lazy spin_until: a spin never comes true -> it ends after exactly its budget of running
// time; a write to a watched line is seen after its own transfer and the spinner's re-read.
#include <gtest/gtest.h>

#include <limits>

#include "sim/guest/sim_env.hpp"
#include "sim/sim_helpers.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {
namespace {

TEST(SpinUntil, TimesOutAfterExactlyItsBudget) {
  const scenario::Scenario sc = testing::bare_metal(1, 2, "tas", "lockloop", 10, 0);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 2);
  testing::LineWord flag;
  std::int64_t t0 = 0, t1 = 0;
  SpinResult r = SpinResult::ready;
  std::uint64_t left = 1;
  constexpr std::uint64_t kBudget = 1000;
  g.create_task("spinner", 0, [&] {
    (void)flag.v.load();  // cached from here on
    t0 = SimEnv::now_ns();
    SpinBudget b{kBudget};
    r = SimEnv::spin_until(
        SpinSite::other, [&] { return flag.v.load() != 0; }, b, 0, [] { return false; });
    left = b.iters;
    t1 = SimEnv::now_ns();
  });
  sim.run();
  EXPECT_EQ(r, SpinResult::timeout);
  EXPECT_EQ(left, 0u);
  const double per_iter = sc.costs.pause_ns + sc.costs.l1_hit_ns;
  EXPECT_NEAR(static_cast<double>(t1 - t0), kBudget * per_iter, 4.0);
  // One sleep, not one event per iteration.
  EXPECT_LT(sim.events(), 20u);
}

TEST(SpinUntil, PeriodicCheckEndsTheSpinEarly) {
  const scenario::Scenario sc = testing::bare_metal(1, 2, "tas", "lockloop", 10, 0);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 2);
  testing::LineWord flag;
  int checks = 0;
  std::uint64_t left = 0;
  SpinResult r = SpinResult::ready;
  g.create_task("spinner", 0, [&] {
    SpinBudget b{100000};
    r = SimEnv::spin_until(
        SpinSite::other, [&] { return flag.v.load() != 0; }, b, 256, [&] { return ++checks == 3; });
    left = b.iters;
  });
  sim.run();
  EXPECT_EQ(r, SpinResult::early);
  EXPECT_EQ(checks, 3);  // at iterations 0, 256 and 512
  EXPECT_EQ(left, 100000u - 512u);
}

TEST(SpinUntil, WatchedWriteIsSeenAfterItsTransferAndTheRereadsTransfer) {
  const scenario::Scenario sc = testing::bare_metal(1, 2, "tas", "lockloop", 10, 0);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 2);
  testing::LineWord flag;
  std::int64_t written_at = 0, seen_at = 0;
  SpinResult r = SpinResult::timeout;
  g.create_task("spinner", 0, [&] {
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    r = SimEnv::spin_until(
        SpinSite::other, [&] { return flag.v.load() != 0; }, forever, 0, [] { return false; });
    seen_at = SimEnv::now_ns();
  });
  g.create_task("writer", 1, [&] {
    g.compute(*tl_ctx.task, 10'000);
    written_at = SimEnv::now_ns();
    flag.v.store(1);
  });
  sim.run();
  EXPECT_EQ(r, SpinResult::ready);
  // The store takes the line from the spinner (one transfer) and changes it on arrival;
  // the spinner notices at the end of its PAUSE and re-reads (a second transfer), acting on
  // the value that read returns.
  const double lag = static_cast<double>(seen_at - written_at);
  const double per_iter = sc.costs.pause_ns + sc.costs.l1_hit_ns;
  EXPECT_GE(lag, 2 * sc.costs.xfer_socket_ns - 1);
  EXPECT_LE(lag, 2 * sc.costs.xfer_socket_ns + sc.costs.l1_hit_ns + per_iter + 3);
}

}  // namespace
}  // namespace pvlock::sim
