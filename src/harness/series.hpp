// SPDX-License-Identifier: GPL-2.0-only
// A time series of a run: every `interval` of simulated time, per VM, the workload's score
// over that interval and the rates of the lock and host events that explain it (PLE exits,
// kicks, directed yields, halts, wait-early decisions, preemptions, steal). The runs the
// seeds describe change regime mid-run (ebizzy under over-commit starts in a collapse and
// may or may not leave it, experiments/README.md); a whole-window mean hides that.
//
// The recorder is the Simulation's Sampler: it reads cumulative counters at each boundary
// and keeps the differences. Counters restart at warm-up end; before_reset() folds their
// totals into the previous snapshot so that the interval spanning the reset stays whole.
#pragma once

#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/simulation.hpp"

namespace pvlock::harness {

struct VmRun;

class SeriesRecorder final : public sim::Sampler {
 public:
  // `vms` must outlive the recorder; `interval` > 0.
  SeriesRecorder(sim::Simulation& sim, const std::vector<VmRun>& vms, sim::Time interval);

  void sample(sim::Time now) override;
  void before_reset() override;

  // {"interval_ns", "columns": [{"name", "unit"}], "vms": {name: [[t_ms, ...], ...]}}
  nlohmann::ordered_json json() const;

  // The raw counters one row is derived from (cumulative values since time 0).
  enum Raw : std::size_t {
    kDone,
    kStealNs,
    kPreempt,
    kHolderPreempt,
    kWaiterPreempt,
    kPleExits,
    kPleYields,
    kKicks,
    kKickYields,
    kHaltBlocks,
    kQueuedWaitNs,
    kQueuedWaits,
    kWaitEarly,
    kWaitEarlyPreempted,
    kWaitHead,
    kWaitNode,
    kKickWakes,
    kKickWakeNs,
    kStealing,
    kRawCount
  };

 private:
  using Snapshot = std::array<double, kRawCount>;
  Snapshot take(std::size_t vm, sim::Time now) const;

  const sim::Simulation& sim_;

  const std::vector<VmRun>& vms_;
  sim::Time interval_;
  sim::Time prev_t_ = 0;
  std::vector<Snapshot> prev_;                          // per VM
  std::vector<std::vector<std::vector<double>>> rows_;  // per VM, per interval
};

}  // namespace pvlock::harness
