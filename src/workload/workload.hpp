// SPDX-License-Identifier: GPL-2.0-only
// A workload: guest task programs plus a score. The runner creates one per VM; the
// workload creates its tasks in that VM's guest kernel in setup() and reports after the run.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "scenario/scenario.hpp"

namespace pvlock::sim {
class Guest;
}

namespace pvlock::workload {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual double score() const = 0;
  virtual std::string unit() const = 0;
  // Workload-specific result fields for the VM's JSON entry.
  virtual void report(nlohmann::ordered_json& vm) const { (void)vm; }
  // Work completed since time 0, warm-up included, in the score's unit times seconds
  // (records, ops, MB, messages): its rate over an interval is the score of that interval
  // (harness/series.hpp). Empty for workloads whose score is not a rate.
  virtual std::optional<double> done() const { return std::nullopt; }
};

// Validates spec's parameters (throwing scenario::ScenarioError at the offending key) and
// creates the workload's tasks in `guest`, whose lock_name is already resolved.
std::unique_ptr<Workload> make_workload(const scenario::WorkloadSpec& spec, sim::Guest& guest);

}  // namespace pvlock::workload
