// SPDX-License-Identifier: GPL-2.0-only
// Runs the experiments' cells through the simulator (in parallel) and compares simulated
// effects with the published ones.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reproduce/experiment.hpp"
#include "reproduce/explain.hpp"
#include "reproduce/metric.hpp"

namespace pvlock::reproduce {

struct CellResult {
  std::string name;
  std::optional<double> published;
  double simulated = 0;  // mean over the experiment's seeds
  std::string unit;
  int seeds = 1;
  int first_seed = 1;       // per_seed[k] ran with run.seed = first_seed + k
  double simulated_sd = 0;  // sample standard deviation over the seeds (0 for one seed)
  // Non-empty if the liveness watchdog stopped a run of the cell (its reason): that run
  // ended early, so `simulated` is NaN rather than a truncated number.
  std::string stuck;
  // With Options::explain: the mechanisms of the cell's (first seed's) run, see explain.hpp.
  std::string explain;
  // Every seed's figure, in seed order: a mean of runs that fell into different regimes
  // (seed 000's boosted 2017 cell) shows itself here, not in the mean.
  std::vector<double> per_seed;
  // With Options::explain and more than one seed: every seed's score per quarter of the
  // window (score_quarters()), in seed order -- which seeds changed regime, and when.
  std::vector<std::string> quarters_per_seed;
  // Non-empty if the cell was not run (the build lacks a lock it `requires`): why.
  std::string not_run;
};

struct EffectResult {
  std::string name;
  std::optional<double> published;  // ratio of the published cells, if both are published
  double simulated = 0;
  double low = 0, high = 0;
  bool agrees = false;
  // Standard error of `simulated` from the two cells' seed-to-seed spread (uncertainty.hpp),
  // and whether `agrees` holds for every ratio within two of them of `simulated`.
  double se = 0;
  bool resolved = true;
  // Non-empty if a cell of the ratio was not run (CellResult::not_run): the effect has no
  // verdict and does not count in tally().
  std::string not_run;
};

struct ExperimentResult {
  std::string id;
  std::string seed_file;
  std::string title;
  std::vector<CellResult> cells;
  std::vector<EffectResult> effects;
};

struct Options {
  bool quick = false;
  std::string only;  // experiment id, or empty for all
  int jobs = 1;
  // Seeds per cell for every experiment (`reproduce --seeds`); 0: each experiment's own
  // (`seeds`, or `[quick] seeds` under --quick).
  int seeds = 0;
  // The seed rule, the same as sweep's: a cell of N seeds runs run.seed S, S + 1, ...,
  // S + N - 1, where S is the run.seed of the cell's scenario with the cell's overrides
  // (scenario_seed below; 1 in every shipped scenario) -- or first_seed when it is > 0
  // (`reproduce --first-seed`: another sample of the same runs).
  int first_seed = 0;
  // The run.seed of a scenario file under these overrides; unset: 1, the default.
  std::function<std::uint64_t(const std::string&, const std::vector<std::string>&)> scenario_seed;
  // Applied to every cell after its own overrides (`reproduce --set`): a sensitivity study,
  // e.g. "every experiment on a quieter host". The published figures do not move with them.
  std::vector<std::string> extra_overrides;
  // Keep explain_run() of each cell's first run (`reproduce --explain`).
  bool explain = false;
  // Called after every finished run (done, total), from worker threads, serialised.
  std::function<void(int, int)> progress;
  // Why a lock a cell `requires` is not in this build ("" if it is); unset: every lock is.
  std::function<std::string(const std::string&)> lock_missing;
};

// Scenario runner: (scenario file, overrides) -> the `pvlock run --json` object.
using Runner =
    std::function<nlohmann::ordered_json(const std::string&, const std::vector<std::string>&)>;

// The overrides a cell runs with: the experiment's [quick] ones under --quick, then the
// cell's own, then Options::extra_overrides, then run.seed = `seed` when one is chosen
// (seed > 0: the cell averages over seeds, or --first-seed was given).
std::vector<std::string> cell_overrides(const Experiment& ex, const Cell& cell,
                                        const Options& options, int seed = 0);

std::vector<ExperimentResult> run_experiments(const std::vector<Experiment>& experiments,
                                              const Options& options, const Runner& runner);

nlohmann::ordered_json to_json(const std::vector<ExperimentResult>& results, double wall_s);
// The tables, a legend of the effect columns and (with_summary) summary_line(, true).
std::string to_table(const std::vector<ExperimentResult>& results, bool with_summary = true);
// "N of M effects agree with their bands (K of the M verdicts are noise)", and without
// --check (check false) that the exit status does not reflect them.
std::string summary_line(const std::vector<ExperimentResult>& results, bool check);
// True if the watchdog stopped any cell's run (pvlock reproduce then exits 3).
bool any_stuck(const std::vector<ExperimentResult>& results);
bool all_agree(const std::vector<ExperimentResult>& results);

// How many effects agree with their bands, and how many verdicts the seeds' noise could
// reverse (EffectResult::resolved false), over all experiments.
struct Tally {
  int effects = 0;
  int agree = 0;
  int noise = 0;
};
Tally tally(const std::vector<ExperimentResult>& results);

}  // namespace pvlock::reproduce
