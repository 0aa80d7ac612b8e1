// SPDX-License-Identifier: GPL-2.0-only
// Simulator speed: events per wall-clock second for a lockloop on 8, 64 and 240 CPUs
// (bare metal, one task per CPU, MCS and TAS). The counters are figures for the docs; no
// test asserts them.
#include <benchmark/benchmark.h>

#include <string>

#include "harness/run.hpp"
#include "sim/simulation.hpp"

namespace {

pvlock::scenario::Scenario scenario(int cpus, const std::string& lock) {
  using namespace pvlock::scenario;
  Scenario sc;
  sc.name = "bench";
  sc.run.duration_ms = cpus >= 200 ? 2 : 5;
  sc.run.warmup_ms = 0.5;
  sc.machine.sockets = cpus >= 16 ? 2 : 1;
  sc.machine.cores_per_socket = cpus / sc.machine.sockets;
  VmSpec vm;
  vm.name = "machine";
  vm.vcpus = cpus;
  vm.guest.lock_name = lock;
  vm.workload.type = "lockloop";
  Dist c;
  c.kind = Dist::Kind::normal;
  c.mean = 470;
  c.cv = 0.1;
  Dist h;
  h.mean = 150;
  vm.workload.params["compute_ns"] = Param{c, {}};
  vm.workload.params["hold_ns"] = Param{h, {}};
  sc.vms.push_back(vm);
  return sc;
}

void BM_Lockloop(benchmark::State& state, const std::string& lock) {
  const auto sc = scenario(static_cast<int>(state.range(0)), lock);
  std::uint64_t events = 0, steps = 0;
  double cpu = 0;
  for (auto _ : state) {
    pvlock::harness::run_scenario(sc, [&](pvlock::sim::Simulation& sim, auto&) {
      events += sim.events();
      steps += sim.inline_steps();
      cpu += sim.run_cpu_seconds();
    });
  }
  // Per CPU-second of the simulating thread (wall time on a shared machine also counts
  // other processes).
  state.counters["events_per_cpu_s"] = static_cast<double>(events) / cpu;
  state.counters["steps_per_cpu_s"] = static_cast<double>(events + steps) / cpu;
  state.counters["sim_ns_per_cpu_s"] = static_cast<double>(sc.run.duration_ms + sc.run.warmup_ms) *
                                       1e6 * static_cast<double>(state.iterations()) / cpu;
}

BENCHMARK_CAPTURE(BM_Lockloop, mcs, std::string("mcs"))
    ->Arg(8)
    ->Arg(64)
    ->Arg(240)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Lockloop, tas, std::string("tas"))
    ->Arg(8)
    ->Arg(64)
    ->Arg(240)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Lockloop, qspinlock, std::string("qspinlock"))
    ->Arg(8)
    ->Arg(64)
    ->Arg(240)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
