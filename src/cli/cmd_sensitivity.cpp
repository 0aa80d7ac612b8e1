// SPDX-License-Identifier: GPL-2.0-only
// `pvlock sensitivity EXPERIMENT`: a Morris (or Latin-hypercube) screening of the model's
// estimated constants over an experiment's effects (sensitivity/screening.hpp), run through
// the sweep runner: resumable with --out, shardable with --shard I/N and `pvlock merge`.
#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "cli/data_dir.hpp"
#include "cli/files.hpp"
#include "cli/limits.hpp"
#include "harness/run.hpp"
#include "sensitivity/screening.hpp"

namespace pvlock::cli {
namespace {

struct SensitivityArgs {
  sensitivity::Options o;
  std::string method = "morris";
  int jobs = 1;
  CLI::Option* seeds_opt = nullptr;
  CLI::Option* trajectories_opt = nullptr;
  CLI::Option* samples_opt = nullptr;
  std::string shard;
  std::string out;
  bool json = false;
  bool quiet = false;
  std::string plot_dir;
};

void plot(const nlohmann::ordered_json& j, const std::string& dir) {
  const std::string tmp = dir + "/" + j.at("experiment").get<std::string>() + ".json";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) throw UsageError("--plot: cannot write " + tmp);
  fmt::print(f, "{}\n", j.dump(2));
  std::fclose(f);
  run_tool("plot_sensitivity.py", {tmp, dir});
}

int run(const SensitivityArgs& a) {
  sensitivity::Options o = a.o;
  if (a.method == "morris")
    o.method = sensitivity::Method::morris;
  else if (a.method == "lhs")
    o.method = sensitivity::Method::lhs;
  else
    throw UsageError("--method " + a.method + ": expected morris or lhs");
  // Each method has its own size; the other's would be ignored without a word.
  if (o.method == sensitivity::Method::morris && a.samples_opt->count() > 0)
    throw UsageError("--samples: only --method lhs takes it; morris is sized by --trajectories");
  if (o.method == sensitivity::Method::lhs && a.trajectories_opt->count() > 0)
    throw UsageError("--trajectories: only --method morris takes it; lhs is sized by --samples");
  if (!a.plot_dir.empty()) make_plot_dir(a.plot_dir);
  if (a.seeds_opt != nullptr && a.seeds_opt->count() > 0) check_seeds(a.o.seeds);
  check_jobs(a.jobs);
  sweep::PointsOptions po;
  po.seeds = 1;
  po.jobs = a.jobs;
  po.progress = a.quiet ? nullptr : stderr;
  po.progress_name = "sensitivity";
  try {
    if (!a.shard.empty()) {
      std::tie(po.shard_index, po.shard_count) = sweep::parse_shard(a.shard);
      if (a.out.empty()) throw UsageError("--shard needs --out FILE (merge the shards' files)");
    }
    const sensitivity::Plan plan = sensitivity::make_plan(o);
    po.seeds = plan.seeds;
    // Without --out the results live in a temporary file for the length of the run.
    const bool temporary = a.out.empty();
    po.out = temporary ? (std::filesystem::temp_directory_path() /
                          fmt::format("pvlock-sensitivity-{}.jsonl", getpid()))
                             .string()
                       : a.out;
    if (temporary) std::filesystem::remove(po.out);
    const sweep::SweepStats st = sweep::run_points(
        plan.points, po, [&plan](const scenario::Scenario& sc, const sweep::PointSpec& p) {
          return sensitivity::reduce_run(plan, p, harness::run_to_json(sc));
        });
    if (!a.quiet)
      fmt::print(stderr,
                 "sensitivity: {} runs in total, {} in this shard, {} already done, {} run\n",
                 st.total, st.in_shard, st.skipped, st.ran);
    if (!a.shard.empty() && po.shard_count > 1) return kExitOk;  // merge, then analyse
    const auto lines = sweep::read_results(po.out, false, false);
    if (temporary) std::filesystem::remove(po.out);
    const nlohmann::ordered_json j = sensitivity::analyse(plan, lines);
    if (a.json)
      fmt::print("{}\n", j.dump(2));
    else
      fmt::print("{}", sensitivity::to_text(j));
    if (!a.plot_dir.empty()) plot(j, a.plot_dir);
  } catch (const sensitivity::SensitivityError& e) {
    throw UsageError(e.what());
  } catch (const sweep::SweepError& e) {
    throw UsageError(e.what());
  }
  return kExitOk;
}

void register_sensitivity(CLI::App& app, Action& action) {
  auto args = std::make_shared<SensitivityArgs>();
  auto* cmd = app.add_subcommand(
      "sensitivity", "Screen which estimated constants an experiment's effects depend on");
  cmd->add_option("experiment", args->o.experiment, "Experiment folder (or its experiment.toml)")
      ->required();
  cmd->add_option("--params", args->o.params,
                  "estimates (default: every estimate the cells use) or K1,K2,... (pvlock costs)");
  cmd->add_option("--method", args->method, "morris (default) or lhs");
  args->trajectories_opt =
      cmd->add_option("--trajectories", args->o.trajectories, "Morris trajectories (default 4)");
  args->samples_opt = cmd->add_option("--samples", args->o.samples, "LHS rows (default 16)");
  args->seeds_opt = cmd->add_option("--seeds", args->o.seeds,
                                    "Seeds per point, 1..1000 (default: the experiment's)");
  cmd->add_flag("--quick", args->o.quick, "The experiment's [quick] overrides and seed count");
  cmd->add_option("--jobs", args->jobs, "Runs in parallel, 1..256 (threads, default 1)");
  cmd->add_option("--shard", args->shard, "I/N: run only every N-th run (needs --out)");
  cmd->add_option("--out", args->out, "Results file (JSON lines; resumed if it exists)");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--plot", args->plot_dir, "Write a mu*-sigma PNG per effect here");
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace

static const CommandRegistration kRegistration{64, register_sensitivity};

}  // namespace pvlock::cli
