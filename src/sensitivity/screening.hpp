// SPDX-License-Identifier: GPL-2.0-only
// `pvlock sensitivity`: which of the model's uncertain constants an experiment's effects
// depend on. A plan (make_plan) picks the constants and their ranges (model/constants.hpp),
// lays a Morris or Latin-hypercube design over that box and turns every design row x cell of
// the experiment's effects into a sweep point; the sweep runner runs them (resumable,
// shardable); analyse() reads the results back: per effect the range of the simulated ratio,
// whether any row lands in the published band, and each constant's Morris mu* and sigma (or,
// for LHS, its correlation with the ratio), beside the seeds' noise.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/constants.hpp"
#include "reproduce/experiment.hpp"
#include "sensitivity/design.hpp"
#include "sweep/results.hpp"
#include "sweep/runner.hpp"

namespace pvlock::sensitivity {

// A usage or input error: the CLI exits 2 with it.
struct SensitivityError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Method { morris, lhs };

struct Options {
  std::string experiment;  // a folder holding experiment.toml, or the file
  // "estimates": every estimate the experiment's scenarios use; or a comma-separated list
  // of constant ids (any constant with a range).
  std::string params = "estimates";
  Method method = Method::morris;
  int trajectories = 4;  // Morris
  int samples = 16;      // LHS
  int seeds = 0;         // per point; 0: the experiment's own count
  bool quick = false;    // the experiment's [quick] overrides (and seed count)
  std::uint64_t design_seed = 1;
};

struct Plan {
  Options options;
  reproduce::Experiment experiment;
  std::vector<const model::Constant*> params;
  // Estimates left out, with why (e.g. a cell sets it: it is the experiment's treatment).
  std::vector<std::pair<std::string, std::string>> excluded;
  Design design;
  std::vector<std::size_t> cells;  // the cells the effects read, in experiment order
  int seeds = 1;
  // Row-major: points[r * cells.size() + c] is design row r on cell cells[c].
  std::vector<sweep::PointSpec> points;
};

// Throws SensitivityError for a bad option, an unknown constant or one without a range.
Plan make_plan(const Options& o);

// What a results line keeps of a run: {"value": the cell's metric} (null if the liveness
// watchdog stopped the run).
nlohmann::ordered_json reduce_run(const Plan& plan, const sweep::PointSpec& point,
                                  const nlohmann::ordered_json& run);

// The screening from the results (every point x seed must be there; SensitivityError names
// the first missing one).
nlohmann::ordered_json analyse(const Plan& plan, const std::vector<sweep::ResultLine>& lines);
std::string to_text(const nlohmann::ordered_json& analysis);

}  // namespace pvlock::sensitivity
