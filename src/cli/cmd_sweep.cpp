// SPDX-License-Identifier: GPL-2.0-only
// `pvlock sweep`: run a scenario over --vary values x seeds into a JSON-lines results file
// (see sweep/runner.hpp and docs/sweeps.md).
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/limits.hpp"
#include "cli/unused_knobs.hpp"
#include "harness/run.hpp"
#include "scenario/parse.hpp"
#include "sweep/results.hpp"
#include "sweep/runner.hpp"
#include "sweep/vary.hpp"

namespace pvlock::cli {
namespace {

// Resuming appends to --out: a file written by another grid (other --vary keys, another
// scenario) would mix two sweeps in one file. Same keys with other values is an extended
// grid and resumes, with a warning for the points the new grid does not have.
void check_same_grid(const sweep::SweepOptions& o, const std::string& scenario_name) {
  std::vector<sweep::ResultLine> lines;
  try {
    lines = sweep::read_results(o.out, true, false);
  } catch (const sweep::SweepError&) {
    return;  // a line cut short by an interrupted run: the runner repairs or reports it
  }
  std::vector<std::string> keys;
  for (const sweep::Vary& v : o.varies) keys.push_back(v.key);
  std::sort(keys.begin(), keys.end());
  std::size_t outside = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::vector<std::string> have;
    for (const auto& [k, v] : lines[i].point.items()) have.push_back(k);
    std::sort(have.begin(), have.end());
    const auto list = [](const std::vector<std::string>& ks) {
      std::string s;
      for (const std::string& k : ks) s += (s.empty() ? "" : ", ") + k;
      return s.empty() ? std::string("none") : s;
    };
    if (have != keys)
      throw UsageError(fmt::format(
          "--out {}: line {} is from another sweep (varied keys: {}; this sweep varies: {}); "
          "resuming would mix the two grids: use another --out",
          o.out, i + 1, list(have), list(keys)));
    const std::string name = lines[i].result.value("scenario", std::string());
    if (!scenario_name.empty() && !name.empty() && name != scenario_name)
      throw UsageError(
          fmt::format("--out {}: line {} is from scenario '{}', not '{}'; use another --out", o.out,
                      i + 1, name, scenario_name));
    for (const sweep::Vary& v : o.varies) {
      bool in = false;
      for (const std::string& val : v.values)
        in = in || lines[i].point[v.key] == sweep::typed_value(val);
      if (!in) {
        ++outside;
        break;
      }
    }
  }
  if (outside > 0)
    fmt::print(stderr,
               "pvlock: warning: --out {}: {} of its {} lines are points this grid does not "
               "have; they stay in the file\n",
               o.out, outside, lines.size());
}

// A key both fixed and varied: one of the two would be dropped without a word.
void reject_varied_set(const sweep::SweepOptions& o) {
  for (const std::string& kv : o.sets) {
    std::string key = kv.substr(0, kv.find('='));
    key.erase(key.find_last_not_of(" \t") + 1);
    key.erase(0, key.find_first_not_of(" \t"));
    for (const sweep::Vary& v : o.varies)
      if (v.key == key)
        throw UsageError(
            fmt::format("--set {}: the key is also varied by --vary {}; give it "
                        "either a fixed value or a list",
                        kv, v.key));
  }
}

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> varies;
  std::vector<std::string> sets;
  int seeds = 1;
  int jobs = 1;
  std::string shard;
  std::string out;
  bool quiet = false;
};

void register_sweep(CLI::App& app, Action& action) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Run a scenario over a grid of values and seeds");
  cmd->add_option("scenario", args->scenario, "Scenario TOML file")->required();
  cmd->add_option("--vary", args->varies, "KEY=V1,V2,... (repeatable; grid = all combinations)");
  cmd->add_option("--set", args->sets, "Fixed override key.path=value (repeatable)");
  cmd->add_option("--seeds", args->seeds, "Seeds per point: run.seed, run.seed+1, ... (1..1000)");
  cmd->add_option("--jobs", args->jobs, "Points simulated in parallel, 1..256 (threads)");
  cmd->add_option("--shard", args->shard, "I/N: run only points whose index % N == I");
  cmd->add_option("--out", args->out, "Results file (JSON lines; resumed if it exists)")
      ->required();
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  cmd->callback([args, &action] {
    action = [args] {
      check_seeds(args->seeds);
      check_jobs(args->jobs);
      sweep::SweepOptions o;
      o.scenario = args->scenario;
      o.sets = args->sets;
      o.seeds = args->seeds;
      o.jobs = args->jobs;
      o.out = args->out;
      o.progress = args->quiet ? nullptr : stderr;
      try {
        for (const std::string& v : args->varies) o.varies.push_back(sweep::parse_vary(v));
        reject_varied_set(o);
        if (!args->shard.empty())
          std::tie(o.shard_index, o.shard_count) = sweep::parse_shard(args->shard);
        // A fixed knob the VM's spinlock does not read is said, as by run; unless a --vary
        // changes a lock, when some points may read it.
        if (std::none_of(o.varies.begin(), o.varies.end(),
                         [](const sweep::Vary& v) { return v.key.ends_with("guest.lock"); })) {
          try {
            warn_unused_knobs(scenario::load_scenario_file(o.scenario, o.sets), o.sets);
          } catch (const scenario::ScenarioError&) {
            // run_sweep reports it, with the point that fails.
          }
        }
        if (std::filesystem::exists(o.out)) {
          // A scenario that does not load is reported by run_sweep (with the point that
          // fails) before anything is written; the grid check needs the scenario's name.
          bool loads = true;
          std::string name;
          try {
            name = scenario::load_scenario_file(o.scenario, o.sets).name;
          } catch (const scenario::ScenarioError&) {
            loads = false;
          }
          if (loads) check_same_grid(o, name);
        }
        const sweep::SweepStats st = sweep::run_sweep(
            o, [](const scenario::Scenario& sc) { return harness::run_to_json(sc); });
        if (!args->quiet)
          fmt::print(stderr,
                     "sweep: {} points in total, {} in this shard, {} already in {}, {} run\n",
                     st.total, st.in_shard, st.skipped, o.out, st.ran);
      } catch (const sweep::SweepError& e) {
        // A grid value is applied as an override: name the --vary it came from, not --set.
        std::string msg = e.what();
        for (const sweep::Vary& v : o.varies)
          if (msg.rfind("--set " + v.key + "=", 0) == 0) {
            bool fixed = false;
            for (const std::string& kv : o.sets) fixed = fixed || msg.rfind("--set " + kv, 0) == 0;
            if (!fixed) msg.replace(0, 5, "--vary");
          }
        throw UsageError(msg);
      }
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{60, register_sweep};

}  // namespace pvlock::cli
