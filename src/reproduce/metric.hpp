// SPDX-License-Identifier: GPL-2.0-only
// What a reproduce cell measures in a run's JSON (`pvlock run --json`):
//   score_sum / score_mean      the VMs' scores, summed or averaged
//   profile:<symbol>            that symbol's share (%) of the guests' sampled CPU time
//   counter_share:<a>/<b>       lock event a as a percentage of lock event b, for statistics a
//                               seed quotes (seed 000: "only 6 % of wait_early events are
//                               caused by vcpu_is_preempted()")
//   counter_rate:<event>        lock event per VM and second of the measured window, for
//                               counts a seed's thread quotes (seed 000: one guest's
//                               lock_event_counts read 5 s apart)
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pvlock::reproduce {

// Empty if `metric` is well formed (and names known lock events), else why not.
std::string metric_error(const std::string& metric);

// The cell's figure from one run. Throws std::runtime_error on an unknown metric.
double extract_metric(const nlohmann::ordered_json& run, const std::string& metric);

}  // namespace pvlock::reproduce
