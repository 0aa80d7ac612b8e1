// SPDX-License-Identifier: GPL-2.0-only
// When a simulated memory access takes effect. A write that has to fetch its line changes
// the value when the line arrives; a load that misses returns the value the line holds when
// its data arrives, queued behind a write already in flight on that line (the line's home
// serves them in order). Seed 002's test-and-set stampede depends on both: a spinner whose
// re-read completes before the winner's cmpxchg lands still sees the lock free and retries;
// one whose re-read completes after it does not. (The spinner's side: spin_until_test.)
#include <gtest/gtest.h>

#include <limits>

#include "sim/guest/sim_env.hpp"
#include "sim/sim_helpers.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {
namespace {

TEST(LineTiming, ALoadIssuedWhileAWriteIsInFlightReturnsTheWrittenValue) {
  const scenario::Scenario sc = testing::bare_metal(1, 2, "tas", "lockloop", 10, 0);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 2);
  testing::LineWord w;
  std::int64_t write_issued = 0, load_done = 0;
  std::uint32_t seen = 0;
  g.create_task("reader", 1, [&] {
    (void)w.v.load();
    // Issue the load 20 ns into the writer's transfer, well before the line reaches it.
    g.compute(*tl_ctx.task, 1'020);
    seen = w.v.load();
    load_done = SimEnv::now_ns();
  });
  g.create_task("writer", 0, [&] {
    g.compute(*tl_ctx.task, 1'000);
    write_issued = SimEnv::now_ns();
    w.v.store(1);
  });
  sim.run();
  // Under the old rule (writes effective at issue, loads sampled at issue) the reader got
  // the 1 one transfer after asking; now it waits for the write to land, then fetches.
  EXPECT_EQ(seen, 1u);
  EXPECT_GE(static_cast<double>(load_done - write_issued), 2 * sc.costs.xfer_socket_ns - 1);
}

TEST(LineTiming, ALoadThatCompletesBeforeALaterWriteLandsReturnsTheOldValue) {
  const scenario::Scenario sc = testing::bare_metal(1, 2, "tas", "lockloop", 10, 0);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 2);
  testing::LineWord w;
  std::uint32_t seen = 99;
  g.create_task("owner", 0, [&] {
    w.v.store(0);  // CPU 0 owns the line
    // Write again 10 ns after the reader asked for the line: the reader's request reached
    // it first, so this write must take the line back and lands after the reader's load.
    g.compute(*tl_ctx.task, 1'010);
    w.v.store(1);
  });
  g.create_task("reader", 1, [&] {
    g.compute(*tl_ctx.task, 1'000);
    seen = w.v.load();
  });
  sim.run();
  EXPECT_EQ(seen, 0u);
}

TEST(LineTiming, ASpinnerDoesNotActOnAValueOverwrittenBeforeItsReadCompletes) {
  // The word goes 1 -> 0 -> 1: A's store lands first, B's was issued while A's was in flight
  // and lands one transfer later. The spinner waiting for 0 wakes on A's store, but its
  // re-read reaches the line behind B's write and returns 1: it must spin on (and time out),
  // not act on the 0 it would have seen had the read completed at issue.
  const scenario::Scenario sc = testing::bare_metal(1, 3, "tas", "lockloop", 10, 0);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 3);
  testing::LineWord w;
  w.v.hw_store(1);
  SpinResult r = SpinResult::ready;
  g.create_task("spinner", 0, [&] {
    SpinBudget b{1000};
    r = SimEnv::spin_until(
        SpinSite::other, [&] { return w.v.load() == 0; }, b, 0, [] { return false; });
  });
  g.create_task("a", 1, [&] {
    g.compute(*tl_ctx.task, 1'000);
    w.v.store(0);
  });
  g.create_task("b", 2, [&] {
    g.compute(*tl_ctx.task, 1'010);
    w.v.store(1);
  });
  sim.run();
  EXPECT_EQ(r, SpinResult::timeout);
  EXPECT_EQ(w.v.raw(), 1u);
}

}  // namespace
}  // namespace pvlock::sim
