// SPDX-License-Identifier: GPL-2.0-only
#include "harness/sim_torture.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "harness/progress.hpp"
#include "harness/run.hpp"
#include "pvlock/lock/knobs.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"
#include "sim/guest/sim_env.hpp"
#include "sim/simulation.hpp"
#include "workload/torture.hpp"

namespace pvlock::harness {

namespace {

// The scenario of `pvlock torture --world sim` as TOML text, so that the run command's
// override machinery (--set key.path=value, with its validation and messages) applies to it
// unchanged. Knobs are written as strings through each knob's own getter and setter.
std::string torture_scenario_toml(const native::TortureOptions& o, int n) {
  const int sockets = (n >= 16 && n % 2 == 0) ? 2 : 1;
  std::string t;
  t += fmt::format("[run]\nseed = {}\nwarmup_ms = 0\nduration_ms = {}\n", o.seed,
                   o.duration_s * 1e3);
  t += fmt::format("[machine]\nsockets = {}\ncores_per_socket = {}\nthreads_per_core = 1\n",
                   sockets, n / sockets);
  // Bare metal: the top-level [guest] and [workload] are one pinned "VM" of all CPUs.
  t += fmt::format("[guest]\nlock = \"{}\"\n", o.lock);
  const LockPolicies defaults{};
  for (const Knob& k : all_knobs())
    if (const std::string v = k.get(o.policies); v != k.get(defaults))
      t += fmt::format("{} = \"{}\"\n", k.name, v);
  t += fmt::format(
      "[workload]\ntype = \"torture\"\nhold_ns = {}\nlong_hold_ns = {}\n"
      "long_hold_one_in = {}\nreaders = {}\n",
      o.hold_ns, o.long_hold_ns, o.long_hold_one_in, o.readers);
  return t;
}

}  // namespace

native::TortureResult run_sim_torture(const native::TortureOptions& o,
                                      const std::vector<std::string>& overrides) {
  bool known = false;
  for (const LockInfo& i : lock_infos<sim::SimEnv>()) known = known || i.name == o.lock;
  if (!known) throw std::invalid_argument("unknown lock '" + o.lock + "'");
  const int n = std::max(1, o.threads);
  scenario::Scenario sc =
      scenario::parse_scenario(torture_scenario_toml(o, n), "torture", overrides);
  sc.vms.front().name = "torture";  // how the diagnostic names its tasks

  native::TortureResult out;
  const auto inspect = [&](sim::Simulation& sim, std::vector<VmRun>& vms) {
    if (auto r = workload::torture_result(*vms.front().workload)) out = *r;
    if (const auto& rep = sim.watchdog().report()) {
      out.stuck = true;
      out.liveness = rep->text();
    }
  };
  // o.cancel (Ctrl-C) stops the simulation at its next sample; the totals are those so far.
  ProgressOptions progress;
  progress.cancel = o.cancel;
  std::unique_ptr<sim::Sampler> sampler;
  const auto prepare = [&](sim::Simulation& sim, std::vector<VmRun>&) {
    if (o.cancel == nullptr) return;
    sampler = make_progress_sampler(sim, progress, nullptr);
    sim.set_sampler(sampler.get(), progress_interval(sim.end_time()));
  };
  try {
    run_scenario(sc, inspect, nullptr, prepare);
  } catch (const Interrupted& e) {
    out.interrupted = true;
    out.duration_s = static_cast<double>(e.at) / 1e9;
    // Its rule (an acquisition in the last stretch of the planned run) cannot judge a run
    // cut short; the liveness watchdog, which did not fire, did judge it so far.
    out.stuck = !out.liveness.empty();
  }
  return out;
}

}  // namespace pvlock::harness
