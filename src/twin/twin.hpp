// SPDX-License-Identifier: GPL-2.0-only
// `pvlock twin`: every (lock, threads) cell of the will-it-scale lock loop run natively
// (native/bench.hpp) and predicted by the simulator (twin/twin_scenario.hpp), side by side.
// Nothing in the simulator is fitted to the native result: the prediction comes from the
// calibration and the lock code alone.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/calibration.hpp"
#include "twin/twin_scenario.hpp"

namespace pvlock::twin {

struct TwinOptions {
  std::vector<std::string> locks;  // native names; empty = default_twin_locks()
  std::vector<int> threads;        // empty = default_twin_threads()
  double native_s = 1.0;           // per native cell
  TwinWorkload workload;
  SimSettings sim;
  int sim_jobs = 1;  // simulations run at once (after every native cell is done)
  // Sample the other processes' runnable threads before each native cell (background.hpp)
  // for this long; with background_as_stress the twin adds that many CPU-bound host threads.
  double background_window_s = 0.1;
  bool background_as_stress = false;
};

struct TwinCell {
  std::string lock;
  std::string sim_lock;
  int threads = 0;
  double measured_ops_s = 0;
  double measured_fairness = 0;
  double measured_cpu_s = 0;
  double steal_fraction = 0;  // /proc/stat steal during the native cell
  double background = 0;      // other processes' mean runnable threads just before it
  // Involuntary context switches of the benchmark's process per second of the native cell
  // (getrusage's ru_nivcsw): how often the OS took a CPU from a thread, the native side of
  // predicted_preemptions_s.
  double measured_switches_s = 0;
  int stress_threads = 0;  // what the twin simulated of them (background_as_stress)
  bool native_stuck = false;
  double predicted_ops_s = 0;
  double predicted_fairness = 0;
  double predicted_wait_pct = 0;  // simulated: mean share of time a thread was runnable, off CPU
  std::uint64_t predicted_holder_preemptions = 0;
  std::uint64_t predicted_waiter_preemptions = 0;
  double predicted_preemptions_s = 0;  // simulated host's involuntary deschedules per second
  bool sim_stuck = false;
  double sim_wall_s = 0;
  // predicted / measured; nullopt when nothing was measured.
  std::optional<double> ratio() const;
};

struct Collapse {
  std::string lock;
  int per_core_threads = 0;  // 1 thread per core
  int over_threads = 0;      // 4 threads per core
  std::optional<double> measured;
  std::optional<double> predicted;
  std::optional<double> ratio() const;  // predicted / measured
  bool within_2x() const;
};

struct TwinSummary {
  std::optional<double> rank_correlation;  // Spearman over every cell
  std::vector<Collapse> collapse;          // one per lock
  int collapse_within_2x = 0;
  double mean_steal = 0;       // over the native cells
  double mean_background = 0;  // over the native cells
};

struct TwinResult {
  calibrate::Calibration calibration;
  TwinOptions options;
  std::vector<TwinCell> cells;
  TwinSummary summary;
};

// 1, cores, 2 x cores, 4 x cores (deduplicated).
std::vector<int> default_twin_threads(int cores);

// Runs every native cell (progress after each), then every simulation. `progress` gets one
// line per step.
TwinResult run_twin(const calibrate::Calibration& cal, const TwinOptions& options,
                    const std::function<void(const std::string&)>& progress = {});

TwinSummary summarize_cells(const std::vector<TwinCell>& cells, int cores);

nlohmann::ordered_json to_json(const TwinResult& r);
std::string table_text(const TwinResult& r);

}  // namespace pvlock::twin
