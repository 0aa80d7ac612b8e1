// Runs the experiments' cells through the simulator (in parallel) and compares simulated
// effects with the published ones.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reproduce/experiment.hpp"

namespace pvlock::reproduce {

struct CellResult {
  std::string name;
  std::optional<double> published;
  double simulated = 0;
  std::string unit;
  // Non-empty if the liveness watchdog stopped the cell's run (its reason): the run ended
  // early, so `simulated` is NaN rather than a truncated number.
  std::string stuck;
};

struct EffectResult {
  std::string name;
  std::optional<double> published;  // ratio of the published cells, if both are published
  double simulated = 0;
  double low = 0, high = 0;
  bool agrees = false;
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
  // Called after every finished cell (done, total), from worker threads, serialised.
  std::function<void(int, int)> progress;
};

// Scenario runner: (scenario file, overrides) -> the `pvlock run --json` object.
using Runner =
    std::function<nlohmann::ordered_json(const std::string&, const std::vector<std::string>&)>;

std::vector<ExperimentResult> run_experiments(const std::vector<Experiment>& experiments,
                                              const Options& options, const Runner& runner);

// A cell's figure from a run: "score_sum" / "score_mean" over the VMs' scores, or
// "profile:<symbol>" = that symbol's share (percent) of the guests' CPU time.
double extract_metric(const nlohmann::ordered_json& run, const std::string& metric);

nlohmann::ordered_json to_json(const std::vector<ExperimentResult>& results, double wall_s);
std::string to_table(const std::vector<ExperimentResult>& results);
// True if the watchdog stopped any cell's run (pvlock reproduce then exits 3).
bool any_stuck(const std::vector<ExperimentResult>& results);
bool all_agree(const std::vector<ExperimentResult>& results);

}  // namespace pvlock::reproduce
