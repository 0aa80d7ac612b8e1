// `pvlock sweep`: run a scenario over --vary values x seeds into a JSON-lines results file
// (see sweep/runner.hpp and docs/sweeps.md).
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "harness/run.hpp"
#include "sweep/runner.hpp"

namespace pvlock::cli {
namespace {

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
  cmd->add_option("--seeds", args->seeds, "Seeds per point: run.seed, run.seed+1, ...");
  cmd->add_option("--jobs", args->jobs, "Points simulated in parallel (threads)");
  cmd->add_option("--shard", args->shard, "I/N: run only points whose index % N == I");
  cmd->add_option("--out", args->out, "Results file (JSON lines; resumed if it exists)")
      ->required();
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  cmd->callback([args, &action] {
    action = [args] {
      sweep::SweepOptions o;
      o.scenario = args->scenario;
      o.sets = args->sets;
      o.seeds = args->seeds;
      o.jobs = args->jobs;
      o.out = args->out;
      o.progress = args->quiet ? nullptr : stderr;
      try {
        for (const std::string& v : args->varies) o.varies.push_back(sweep::parse_vary(v));
        if (!args->shard.empty())
          std::tie(o.shard_index, o.shard_count) = sweep::parse_shard(args->shard);
        const sweep::SweepStats st = sweep::run_sweep(
            o, [](const scenario::Scenario& sc) { return harness::run_to_json(sc); });
        if (!args->quiet)
          fmt::print(stderr,
                     "sweep: {} points in total, {} in this shard, {} already in {}, {} run\n",
                     st.total, st.in_shard, st.skipped, o.out, st.ran);
      } catch (const sweep::SweepError& e) {
        throw UsageError(e.what());
      }
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{60, register_sweep};

}  // namespace pvlock::cli
