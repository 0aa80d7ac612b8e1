// SPDX-License-Identifier: GPL-2.0-only
// Kernel in the loop, speed: the wall time of examples/overcommit-lockloop.toml (two 16-vCPU
// VMs on 16 pCPUs, 60 ms after 10 ms) with every VM on the kernel's own lock code against
// the same run with pvlock's twin, over seeds 1-3. Counters: the simulating thread's CPU
// seconds and wall seconds per lock and their ratios (kernel / pvlock); figures for
// docs/kernel-in-the-loop.md, never asserted by tests.
#include <benchmark/benchmark.h>

#include <string>

#include "harness/run.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"
#include "sim/simulation.hpp"

namespace {

struct Cost {
  double wall = 0, cpu = 0;
};

Cost run(const std::string& lock) {
  Cost c;
  for (int seed = 1; seed <= 3; ++seed) {
    const auto sc = pvlock::scenario::load_scenario_file(
        std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml",
        {"vm[0].guest.lock=" + lock, "run.seed=" + std::to_string(seed)});
    c.wall += pvlock::harness::run_scenario(
        sc, [&](pvlock::sim::Simulation& sim, auto&) { c.cpu += sim.run_cpu_seconds(); });
  }
  return c;
}

void BM_KernelVsPvlock(benchmark::State& state, const std::string& mine,
                       const std::string& theirs) {
  bool built = false;
  for (const pvlock::LockInfo& info : pvlock::lock_infos<pvlock::NativeEnv>())
    built = built || info.name == theirs;
  if (!built) {
    state.SkipWithError((theirs + ": " + pvlock::missing_lock_reason(theirs)).c_str());
    return;
  }
  Cost a, b;
  for (auto _ : state) {
    const Cost x = run(mine), y = run(theirs);
    a.wall += x.wall;
    a.cpu += x.cpu;
    b.wall += y.wall;
    b.cpu += y.cpu;
  }
  state.counters["pvlock_wall_s"] = a.wall;
  state.counters["kernel_wall_s"] = b.wall;
  state.counters["wall_ratio"] = b.wall / a.wall;
  state.counters["cpu_ratio"] = b.cpu / a.cpu;
}

BENCHMARK_CAPTURE(BM_KernelVsPvlock, pvqspinlock, std::string("pvqspinlock"),
                  std::string("kernel:pvqspinlock"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_KernelVsPvlock, qspinlock, std::string("qspinlock"),
                  std::string("kernel:qspinlock"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
