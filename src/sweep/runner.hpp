// SPDX-License-Identifier: GPL-2.0-only
// `pvlock sweep`: run a scenario over the cartesian product of --vary values x seeds,
// appending one JSON line per point to a results file. Resumable (points already in the
// file are skipped), shardable (--shard I/N takes every N-th point), parallel (--jobs).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "sweep/vary.hpp"

namespace pvlock::sweep {

// Simulates one scenario (harness::run_to_json in the CLI; a fake in tests). Must be callable
// from several threads at once.
using RunFn = std::function<nlohmann::ordered_json(const scenario::Scenario&)>;

struct SweepOptions {
  std::string scenario;           // path
  std::vector<std::string> sets;  // fixed --set overrides
  std::vector<Vary> varies;
  int seeds = 1;  // seeds run.seed, run.seed + 1, ... (run.seed from the file and --set)
  int jobs = 1;
  int shard_index = 0;  // --shard I/N: the points whose index % N == I
  int shard_count = 1;
  std::string out;
  std::FILE* progress = stderr;  // nullptr: quiet
};

struct SweepStats {
  std::size_t total = 0;     // points x seeds in the whole sweep
  std::size_t in_shard = 0;  // of which this shard's
  std::size_t skipped = 0;   // already in the results file
  std::size_t ran = 0;
};

// One point of a general sweep (run_points): a scenario with its overrides, identified in the
// results file by `point`.
struct PointSpec {
  std::string scenario;
  std::vector<std::string> sets;
  nlohmann::ordered_json point;
  std::string label;  // names the point in progress and errors ("key=value ..."); may be empty
};

// Simulates one point: like RunFn, with the point it is for (e.g. to reduce the result to the
// figure the point is about).
using PointRunFn =
    std::function<nlohmann::ordered_json(const scenario::Scenario&, const PointSpec&)>;

struct PointsOptions {
  int seeds = 1;  // seeds run.seed, run.seed + 1, ... of each point's scenario
  int jobs = 1;
  int shard_index = 0;
  int shard_count = 1;
  std::string out;
  std::FILE* progress = stderr;
  std::string progress_name = "sweep";  // the progress lines' prefix
};

// The runner under `pvlock sweep` and `pvlock sensitivity`: every point x seed, resumable from
// `out`, shardable, in parallel, with the validation and error rules of run_sweep.
SweepStats run_points(const std::vector<PointSpec>& points, const PointsOptions& o,
                      const PointRunFn& run);

// "I/N" -> (I, N); SweepError unless 0 <= I < N.
std::pair<int, int> parse_shard(const std::string& s);

// Validates every combination (parsing the scenario with its overrides) before running any:
// a bad key or value is a SweepError naming it. An error while simulating a point (e.g. an
// invalid workload parameter) stops the sweep: SweepError for scenario errors, else rethrown.
// Lines are written in point order and flushed one by one.
SweepStats run_sweep(const SweepOptions& o, const RunFn& run);

}  // namespace pvlock::sweep
