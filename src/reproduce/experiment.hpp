// SPDX-License-Identifier: GPL-2.0-only
// An experiment of `pvlock reproduce`: one seed's published figures as data, and the
// scenarios that re-derive them.
//
// experiments/<id>/experiment.toml:
//   id, seed_file, title, claim
//   seeds = N (1..64, default 1): every cell runs with run.seed = 1..N and reports the mean,
//             for effects smaller than one run's seed-to-seed noise
//   [quick] set = [...]                 overrides applied to every cell under --quick
//           seeds = N                   the seed count under --quick (default: seeds), so
//                                       that the full run can average more seeds
//   [[cell]]  name, scenario (path relative to the folder), set = [...overrides],
//             metric ("score_sum" | "score_mean" | "profile:<symbol>" |
//                     "counter_share:<event>/<event>" | "counter_rate:<event>", see
//                     metric.hpp),
//             published (number, or absent for an unpublished cell), unit,
//             published_low/published_high (a published range; published = its midpoint),
//             requires = [lock names] (a lock the build may lack, e.g. a kernel:<variant>/*
//             lock: without it the cell and its effects are "not run", with the reason),
//             quick = false (the cell is left out of --quick, with its effects)
//   [[effect]] name, numerator, denominator (cell names), low/high (optional explicit
//             tolerance band for the simulated ratio), or factor (the simulated ratio
//             within x/÷ factor of the published one); otherwise the tolerance rule
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pvlock::reproduce {

struct ExperimentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Cell {
  std::string name;
  std::string scenario;  // absolute path
  std::vector<std::string> overrides;
  std::string metric = "score_sum";
  std::optional<double> published;
  std::optional<double> published_low, published_high;
  std::string unit;
  std::vector<std::string> requires_locks;  // `requires`
  bool in_quick = true;                     // `quick`
};

struct Effect {
  std::string name;
  std::string numerator;
  std::string denominator;
  std::optional<double> low, high;  // explicit band for the simulated ratio
  std::optional<double> factor;     // or: within x/÷ factor of the published ratio
};

struct Experiment {
  std::string id;
  std::string dir;
  std::string seed_file;
  std::string title;
  std::string claim;
  std::vector<std::string> quick_overrides;
  int seeds = 1;
  std::optional<int> quick_seeds;  // [quick] seeds
  int seed_count(bool quick) const { return quick && quick_seeds ? *quick_seeds : seeds; }
  std::vector<Cell> cells;
  std::vector<Effect> effects;
  const Cell* cell(const std::string& name) const;
};

// Loads experiments/<id>/experiment.toml for every folder of `root`, sorted by id.
// Throws ExperimentError ("FILE:LINE:COL: key: message") on malformed files.
std::vector<Experiment> load_experiments(const std::string& root);
Experiment load_experiment(const std::string& toml_path);

// The acceptance band for an effect's simulated ratio (experiments/README.md, "Tolerances"):
// a large published ratio (>= 1.3 or <= 1/1.3) must be matched within x/÷ 1.3; a small one
// must go the same way by at least a third of the published size and by at most the size
// + 0.15 (1.06 -> [1.02, 1.21]: a null effect does not agree with a +6 % one); a published
// 1.0 (no effect) must stay within 1 +- 0.15.
struct Band {
  double low;
  double high;
};
Band tolerance_band(double published_ratio, const Effect& e);
// "[1.020, 1.210]"; a band open above as "> 1.000", one open below (low <= 0) as "< 0.250".
std::string band_text(const Band& b);

}  // namespace pvlock::reproduce
