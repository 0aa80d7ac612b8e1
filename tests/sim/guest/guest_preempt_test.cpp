// SPDX-License-Identifier: GPL-2.0-only
// The guest kernel's preemption model ([vm.guest] preempt). Two tasks share one vCPU; the
// first computes for 20 ms (five guest ticks; the two share the 24 ms latency in 12 ms slices).
// Under "full" (CONFIG_PREEMPT) the tick switches to the second task even inside a system call;
// under "none" (CONFIG_PREEMPT_NONE) only the return to user mode does, while user-mode work is
// preempted under both.
#include <gtest/gtest.h>

#include "sim/guest/sim_env.hpp"
#include "sim/sim_helpers.hpp"
#include "sim/simulation.hpp"
#include "workload/guest_api.hpp"

namespace pvlock::sim {
namespace {

constexpr std::int64_t kWork = 20'000'000;

struct Outcome {
  std::int64_t other_first_ran = -1;  // when the second task first ran
  std::int64_t long_done = -1;        // when the long computation ended
  std::int64_t returned = -1;         // when the first task was back from kernel_exit()
};

Outcome run(scenario::GuestSpec::Preempt model, bool in_kernel) {
  scenario::Scenario sc = testing::bare_metal(1, 1, "tas", "lockloop", 60, 0);
  sc.vms[0].guest.preempt = model;
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 1);
  Outcome o;
  g.create_task("syscall", 0, [&] {
    if (in_kernel) workload::api::kernel_enter();
    workload::api::compute(kWork);
    o.long_done = SimEnv::now_ns();
    if (in_kernel) workload::api::kernel_exit();
    o.returned = SimEnv::now_ns();
  });
  g.create_task("other", 0, [&] {
    o.other_first_ran = SimEnv::now_ns();
    workload::api::compute(1'000'000);
  });
  sim.run();
  return o;
}

TEST(GuestPreempt, FullPreemptsInsideTheKernel) {
  const Outcome o = run(scenario::GuestSpec::Preempt::full, true);
  ASSERT_GE(o.other_first_ran, 0);
  ASSERT_GE(o.long_done, 0);
  EXPECT_LT(o.other_first_ran, o.long_done);
}

TEST(GuestPreempt, NoneWaitsForTheReturnToUserMode) {
  const Outcome o = run(scenario::GuestSpec::Preempt::none, true);
  ASSERT_GE(o.other_first_ran, 0);
  ASSERT_GE(o.long_done, kWork);
  // The tick asked for a reschedule long before; it happens at kernel_exit(), so the
  // other task runs after the system call's work and before the caller continues.
  EXPECT_GE(o.other_first_ran, o.long_done);
  EXPECT_GE(o.returned, o.other_first_ran);
}

TEST(GuestPreempt, NonePreemptsUserMode) {
  const Outcome o = run(scenario::GuestSpec::Preempt::none, false);
  ASSERT_GE(o.other_first_ran, 0);
  ASSERT_GE(o.long_done, 0);
  EXPECT_LT(o.other_first_ran, o.long_done);
}

}  // namespace
}  // namespace pvlock::sim
