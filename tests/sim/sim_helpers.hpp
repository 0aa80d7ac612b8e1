// SPDX-License-Identifier: GPL-2.0-only
// Helpers for simulator tests: bare-metal scenarios built in code.
#pragma once

#include <string>

#include "harness/run.hpp"
#include "scenario/parse.hpp"
#include "scenario/scenario.hpp"
#include "sim/guest/sim_atomic.hpp"

namespace pvlock::sim::testing {

// The error that scenario `text` (named `file`) gives when it is parsed and run; "" if none.
inline std::string scenario_error(const std::string& text, const std::string& file) {
  try {
    (void)harness::run_to_json(scenario::parse_scenario(text, file, {}));
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "";
}

inline scenario::Dist constant(double ns) {
  scenario::Dist d;
  d.mean = ns;
  return d;
}

// One OS on sockets x cores CPUs running `workload` with `lock`.
inline scenario::Scenario bare_metal(int sockets, int cores, const std::string& lock,
                                     const std::string& workload, double duration_ms = 2,
                                     double warmup_ms = 0.5, std::uint64_t seed = 1) {
  scenario::Scenario sc;
  sc.name = "test";
  sc.run.duration_ms = duration_ms;
  sc.run.warmup_ms = warmup_ms;
  sc.run.seed = seed;
  sc.machine.sockets = sockets;
  sc.machine.cores_per_socket = cores;
  sc.machine.threads_per_core = 1;
  scenario::VmSpec vm;
  vm.name = "machine";
  vm.vcpus = sc.machine.cpus();
  vm.placement = scenario::VmSpec::Placement::pinned;
  vm.guest.lock_name = lock;
  vm.workload.type = workload;
  sc.vms.push_back(vm);
  return sc;
}

// A simulated word alone on its cache line, for tests of line timing and spinning.
struct alignas(64) LineWord {
  SimAtomic<std::uint32_t> v{};
};

inline void set_param(scenario::Scenario& sc, const std::string& key, scenario::ParamValue v) {
  sc.vms.front().workload.params[key] = scenario::Param{std::move(v), {}};
}

}  // namespace pvlock::sim::testing
