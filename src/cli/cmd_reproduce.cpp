// SPDX-License-Identifier: GPL-2.0-only
// `pvlock reproduce`: re-run every experiment of the seeds in the simulator and print the
// published figures beside the simulated ones (see reproduce/experiment.hpp).
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "cli/commands.hpp"
#include "cli/data_dir.hpp"
#include "cli/files.hpp"
#include "cli/limits.hpp"
#include "harness/point_progress.hpp"
#include "harness/run.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"
#include "reproduce/explain.hpp"
#include "reproduce/reproduce.hpp"
#include "scenario/parse.hpp"

namespace pvlock::cli {
namespace {

struct ReproduceArgs {
  bool quick = false;
  std::string only;
  int jobs = -1;        // -1: not given (one per core)
  int seeds = -1;       // -1: not given
  int first_seed = -1;  // -1: not given (each cell's scenario run.seed)
  bool json = false;
  bool check = false;
  bool explain = false;
  std::string experiments_dir;
  std::string plot_dir;
  std::vector<std::string> sets;
  CLI::Option* only_opt = nullptr;
};

std::string default_experiments_dir() { return data_dir("experiments").string(); }

void register_reproduce(CLI::App& app, Action& action) {
  auto args = std::make_shared<ReproduceArgs>();
  auto* cmd = app.add_subcommand(
      "reproduce", "Re-run every experiment of the seeds; published vs simulated figures");
  cmd->add_flag("--quick", args->quick, "Scaled-down cells (each experiment's [quick] overrides)");
  args->only_opt = cmd->add_option("--only", args->only, "Run one experiment (e.g. seed001)");
  cmd->add_option("--jobs", args->jobs, "Cells simulated in parallel, 1..256 (default: cores)");
  cmd->add_option("--seeds", args->seeds,
                  "Average every cell over run.seed 1..N, N in 1..1000 (default: each "
                  "experiment's own)");
  cmd->add_option("--first-seed", args->first_seed,
                  "Start every cell's seeds at run.seed K, 1..1000000, instead of its "
                  "scenario's run.seed: another sample of the same runs, to see which verdicts "
                  "the seeds decide");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_flag("--check", args->check, "Exit 1 if any effect disagrees with its band");
  cmd->add_flag("--explain", args->explain,
                "Under every cell, the mechanisms of its run (profile, host exits and yields, "
                "PV slow path)");
  cmd->add_option("--experiments", args->experiments_dir, "Experiments folder");
  cmd->add_option("--plot", args->plot_dir, "Write published-vs-simulated PNG charts here");
  cmd->add_option("--set", args->sets,
                  "Override key.path=value in every cell, after the cell's own (repeatable)");
  cmd->callback([args, &action] {
    action = [args] {
      ReproduceArgs a = *args;
      if (a.jobs != -1) check_jobs(a.jobs);
      if (a.seeds != -1) check_seeds(a.seeds);
      if (a.first_seed != -1 && (a.first_seed < 1 || a.first_seed > 1'000'000))
        throw UsageError(
            fmt::format("--first-seed: must be between 1 and 1000000, got {}", a.first_seed));
      // An empty --only would read as "every experiment" and run them all.
      if (args->only_opt->count() > 0 && a.only.empty())
        throw UsageError("--only: an empty name; give an experiment's id");
      if (!a.plot_dir.empty()) make_plot_dir(a.plot_dir);
      if (a.jobs == -1)
        a.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      if (a.experiments_dir.empty()) a.experiments_dir = default_experiments_dir();
      std::vector<reproduce::Experiment> exps;
      try {
        exps = reproduce::load_experiments(a.experiments_dir);
      } catch (const reproduce::ExperimentError& e) {
        throw UsageError(e.what());
      }
      if (exps.empty())
        throw UsageError(a.experiments_dir +
                         ": no experiments (no folder with an experiment.toml in it)");
      if (!a.only.empty()) {
        bool found = false;
        std::string ids;
        for (const auto& e : exps) {
          found = found || e.id == a.only;
          ids += (ids.empty() ? "" : ", ") + e.id;
        }
        if (!found) throw UsageError("--only: no experiment '" + a.only + "'; experiments: " + ids);
      }
      reproduce::Options o;
      o.quick = a.quick;
      o.only = a.only;
      o.jobs = a.jobs;
      o.seeds = std::max(0, a.seeds);
      o.first_seed = std::max(0, a.first_seed);
      o.scenario_seed = [](const std::string& path, const std::vector<std::string>& overrides) {
        return scenario::load_scenario_file(path, overrides).run.seed;
      };
      o.extra_overrides = a.sets;
      o.explain = a.explain;
      o.lock_missing = [](const std::string& lock) -> std::string {
        for (const LockInfo& info : lock_infos<NativeEnv>())
          if (info.name == lock) return "";
        return missing_lock_reason(lock);
      };
      // Bad --set values are usage errors: check every cell's scenario before simulating.
      if (!a.sets.empty()) {
        for (const auto& ex : exps) {
          if (!a.only.empty() && ex.id != a.only) continue;
          for (const auto& cell : ex.cells) {
            try {
              (void)scenario::load_scenario_file(cell.scenario,
                                                 reproduce::cell_overrides(ex, cell, o));
            } catch (const scenario::ScenarioError& e) {
              throw UsageError(ex.id + "/" + cell.name + ": " + e.what());
            }
          }
        }
      }
      // The progress line of every many-run command; made at the first finished run, when
      // the number of runs is known.
      std::shared_ptr<harness::PointProgress> progress;
      o.progress = [&progress](int done, int total) {
        if (!progress)
          progress = std::make_shared<harness::PointProgress>(
              stderr, static_cast<std::size_t>(total), harness::is_tty(stderr), "reproduce");
        progress->point_done(fmt::format("run {}", done));
        if (done == total) progress->finish();
      };
      // --explain also samples each run (quarters of its window); sampling changes nothing.
      const reproduce::Runner runner = [explain = a.explain](
                                           const std::string& path,
                                           const std::vector<std::string>& overrides) {
        const scenario::Scenario sc = scenario::load_scenario_file(path, overrides);
        const std::int64_t series =
            explain ? reproduce::quarters_series_interval_ns(sc.run.warmup_ms, sc.run.duration_ms)
                    : 0;
        return harness::run_to_json(sc, nullptr, series);
      };
      const auto t0 = std::chrono::steady_clock::now();
      const auto results = reproduce::run_experiments(exps, o, runner);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const auto j = reproduce::to_json(results, wall);
      if (a.json)
        fmt::print("{}\n", j.dump(2));
      else
        fmt::print("{}(wall {:.1f} s)\n{}\n", reproduce::to_table(results, false), wall,
                   reproduce::summary_line(results, a.check));
      if (!a.plot_dir.empty()) {
        const std::string tmp = a.plot_dir + "/reproduce.json";
        std::FILE* f = std::fopen(tmp.c_str(), "w");
        if (f == nullptr) throw UsageError("--plot: cannot write " + tmp);
        fmt::print(f, "{}\n", j.dump(2));
        std::fclose(f);
        run_tool("plot.py", {"reproduce", tmp, a.plot_dir});
      }
      // A cell whose run the watchdog stopped is a liveness failure, never a quiet number.
      if (reproduce::any_stuck(results)) return kExitStuck;
      if (a.check && !reproduce::all_agree(results)) return kExitFailed;
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{40, register_reproduce};

}  // namespace pvlock::cli
