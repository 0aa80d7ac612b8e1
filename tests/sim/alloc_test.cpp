// SPDX-License-Identifier: GPL-2.0-only
// The simulator's steady state allocates nothing: two runs that differ only in length make
// the same number of heap allocations up to the end of Simulation::run() (set-up, first
// touches of cache lines and per-CPU objects happen in both before the shorter one ends).
#include <gtest/gtest.h>

#include "harness/run.hpp"
#include "heap_hooks.hpp"
#include "sim/simulation.hpp"
#include "sim_helpers.hpp"

namespace pvlock::sim {
namespace {

std::uint64_t allocations_during_run(const std::string& lock, double duration_ms) {
  scenario::Scenario sc = testing::bare_metal(2, 8, lock, "lockloop", duration_ms, 0.2);
  testing::set_param(sc, "compute_ns", testing::constant(300));
  testing::set_param(sc, "hold_ns", testing::constant(100));
  testing::set_param(sc, "tasks_per_vcpu", std::int64_t{2});
  std::uint64_t during = 0;
  harness::run_scenario(
      sc, [&](Simulation&, std::vector<harness::VmRun>&) { during = testing::allocation_count(); });
  return during;
}

TEST(Allocation, SteadyStateIsAllocationFree) {
  for (const char* lock : {"tas", "mcs", "ticket"}) {
    // Set-up is identical for both lengths, so any difference is allocation in the run.
    testing::reset_allocation_count();
    testing::set_allocation_counting(true);
    const std::uint64_t short_run = allocations_during_run(lock, 1);
    testing::reset_allocation_count();
    const std::uint64_t long_run = allocations_during_run(lock, 4);
    testing::set_allocation_counting(false);
    EXPECT_EQ(short_run, long_run) << lock;
  }
}

// messaging with its process lifecycle: forks, exits and reaps reuse the task slots, so
// group turnovers allocate nothing either (loops short enough that both runs turn over).
std::uint64_t messaging_allocations_during_run(double duration_ms) {
  scenario::Scenario sc = testing::bare_metal(1, 4, "pvqspinlock", "messaging", duration_ms, 2);
  testing::set_param(sc, "groups", std::int64_t{2});
  testing::set_param(sc, "senders", std::int64_t{3});
  testing::set_param(sc, "receivers", std::int64_t{3});
  testing::set_param(sc, "loops", std::int64_t{4});
  testing::set_param(sc, "lifecycle", true);
  std::uint64_t during = 0;
  harness::run_scenario(
      sc, [&](Simulation&, std::vector<harness::VmRun>&) { during = testing::allocation_count(); });
  return during;
}

TEST(Allocation, MessagingLifecycleIsAllocationFree) {
  testing::reset_allocation_count();
  testing::set_allocation_counting(true);
  const std::uint64_t short_run = messaging_allocations_during_run(6);
  testing::reset_allocation_count();
  const std::uint64_t long_run = messaging_allocations_during_run(24);
  testing::set_allocation_counting(false);
  EXPECT_EQ(short_run, long_run);
}

}  // namespace
}  // namespace pvlock::sim
