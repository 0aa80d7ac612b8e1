// SPDX-License-Identifier: GPL-2.0-only
// The guest's run queue order ([vm.guest] scheduler). Either way a slice shares the 24 ms
// latency among the runnable tasks (never under the 3 ms minimum granularity). rr: tasks
// take turns in the order they became runnable. cfs: least vruntime first, sleeper credit
// and a 4 ms wakeup granularity, and a forked child placed a slice behind (START_DEBIT).
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "scenario/parse.hpp"
#include "sim/guest/sim_env.hpp"
#include "sim/sim_helpers.hpp"
#include "sim/simulation.hpp"
#include "workload/guest_api.hpp"

namespace pvlock::sim {
namespace {

using Sched = scenario::GuestSpec::Scheduler;

scenario::Scenario machine(int cpus, Sched s) {
  scenario::Scenario sc = testing::bare_metal(1, cpus, "tas", "lockloop", 80, 0);
  sc.vms[0].guest.scheduler = s;
  return sc;
}

// User-mode work in short pieces, so that a reschedule is taken within 0.1 ms.
void hog(std::int64_t ns) {
  for (std::int64_t done = 0; done < ns; done += 100'000) workload::api::compute(100'000);
}

// `hogs` CPU-bound tasks on one vCPU: when does the second first run?
std::int64_t second_task_starts(Sched s, int hogs = 2) {
  scenario::Scenario sc = machine(1, s);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 1);
  std::int64_t started = -1;
  g.create_task("first", 0, [] { hog(30'000'000); });
  g.create_task("second", 0, [&] {
    started = SimEnv::now_ns();
    hog(1'000'000);
  });
  for (int i = 2; i < hogs; ++i) g.create_task("more", 0, [] { hog(1'000'000); });
  sim.run();
  return started;
}

TEST(GuestCfs, TwoTasksShareTheLatencyInTwelveMillisecondSlices) {
  // 24 ms / 2 runnable = 12 ms under either order, taken at the tick that ends it (ticks
  // every 4 ms).
  for (Sched s : {Sched::rr, Sched::cfs}) {
    const std::int64_t second = second_task_starts(s);
    EXPECT_GE(second, 12'000'000);
    EXPECT_LT(second, 16'500'000);
  }
}

TEST(GuestCfs, EightOrMoreTasksGetTheMinimumGranularity) {
  // 24 ms / 8 = 3 ms: __sched_period() stretches the period instead of cutting the slice
  // further. The first guest tick after 3 ms switches.
  for (Sched s : {Sched::rr, Sched::cfs}) {
    for (int hogs : {8, 12}) {
      const std::int64_t second = second_task_starts(s, hogs);
      EXPECT_GE(second, 3'000'000) << hogs;
      EXPECT_LT(second, 8'000'000) << hogs;
    }
  }
}

// vCPU 0 runs two hogs and a sleeper that blocks at once; a task on vCPU 1 wakes the sleeper
// after 20 ms. How long until the sleeper runs?
std::int64_t sleeper_wake_to_run(Sched s) {
  scenario::Scenario sc = machine(2, s);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 2);
  Task* sleeper = nullptr;
  std::int64_t woken_at = -1, ran_at = -1;
  sleeper = &g.create_task("sleeper", 0, [&] {
    SimEnv::prepare_block();
    SimEnv::block();
    ran_at = SimEnv::now_ns();
  });
  g.create_task("hog-a", 0, [] { hog(60'000'000); });
  g.create_task("hog-b", 0, [] { hog(60'000'000); });
  g.create_task("waker", 1, [&] {
    workload::api::compute(20'000'000);
    woken_at = SimEnv::now_ns();
    SimEnv::wake(sleeper);
  });
  sim.run();
  EXPECT_GE(woken_at, 0);
  EXPECT_GE(ran_at, woken_at);
  return ran_at - woken_at;
}

TEST(GuestCfs, AWokenSleeperRunsBeforeTheTasksThatKeptRunning) {
  // cfs: the sleeper's vruntime (0) is placed at min_vruntime - 12 ms (~8 ms against the hogs'
  // ~10 ms and more), more than the 4 ms granularity behind the running hog: it preempts
  // (wake-up IPI, next preemption point). rr: the reschedule picks the hog queued first, and
  // the sleeper waits out its slice.
  EXPECT_LT(sleeper_wake_to_run(Sched::cfs), 200'000);
  EXPECT_GE(sleeper_wake_to_run(Sched::rr), 2'000'000);
}

// A forked child is created before a task that is not: who runs first?
std::string first_to_run(Sched s) {
  scenario::Scenario sc = machine(1, s);
  Simulation sim(sc);
  Guest& g = sim.add_guest("g", sc.vms[0].guest, 1);
  std::string first;
  g.create_task(
      "child", 0,
      [&] {
        if (first.empty()) first = "child";
      },
      true);
  g.create_task("parent", 0, [&] {
    if (first.empty()) first = "parent";
  });
  sim.run();
  return first;
}

TEST(GuestCfs, AForkedChildStartsBehindItsParent) {
  EXPECT_EQ(first_to_run(Sched::rr), "child");    // creation order
  EXPECT_EQ(first_to_run(Sched::cfs), "parent");  // START_DEBIT: a slice of vruntime behind
}

// The messaging lifecycle (many tasks per vCPU, sleeping and waking all the time) under cfs:
// live, exclusive, reproducible, and not the rr run.
scenario::Scenario lifecycle(Sched s) {
  scenario::Scenario sc = testing::bare_metal(1, 4, "pvqspinlock", "messaging", 20, 2, 5);
  testing::set_param(sc, "groups", std::int64_t{3});
  testing::set_param(sc, "senders", std::int64_t{4});
  testing::set_param(sc, "receivers", std::int64_t{4});
  testing::set_param(sc, "loops", std::int64_t{10});
  testing::set_param(sc, "lifecycle", true);
  sc.vms[0].guest.scheduler = s;
  return sc;
}

TEST(GuestCfs, MessagingLifecycleIsLiveExclusiveAndReproducible) {
  const auto a = harness::run_to_json(lifecycle(Sched::cfs));
  const auto b = harness::run_to_json(lifecycle(Sched::cfs));
  const auto rr = harness::run_to_json(lifecycle(Sched::rr));
  EXPECT_FALSE(a.contains("liveness")) << a["liveness"].dump(2);
  const auto& vm = a.at("vms").at(0);
  EXPECT_EQ(vm.at("lifecycle_violations").get<std::uint64_t>(), 0u);
  EXPECT_GT(vm.at("reaps").get<std::uint64_t>(), 48u);
  EXPECT_GT(vm.at("forks").get<std::uint64_t>(), 48u);
  EXPECT_EQ(a.at("vms").dump(), b.at("vms").dump());
  EXPECT_EQ(a.at("profile").dump(), b.at("profile").dump());
  EXPECT_NE(a.at("vms").dump(), rr.at("vms").dump());
}

std::string error_of(const std::string& value) {
  return testing::scenario_error(
      "[run]\nduration_ms = 2\n[machine]\nsockets = 1\ncores_per_socket = 2\n[workload]\n"
      "type = \"lockloop\"\n[guest]\nscheduler = " +
          value + "\n",
      "g.toml");
}

TEST(GuestCfs, SchedulerKeyIsParsedAndBadValuesNameFileLineAndField) {
  EXPECT_EQ(error_of("\"cfs\""), "");
  EXPECT_EQ(error_of("\"rr\""), "");
  EXPECT_EQ(error_of("\"fifo\""),
            "g.toml:9:13: guest.scheduler: unknown value 'fifo'; valid: rr, cfs");
}

}  // namespace
}  // namespace pvlock::sim
