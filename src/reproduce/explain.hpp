// `pvlock reproduce --explain`: one run's mechanisms in two lines, so that a cell's figure
// comes with why: where the guests' CPU time went (profile, halted share), what the host did
// to the vCPUs (steal, pause-loop exits, directed yields, preemptions of lock holders) and
// the PV slow path's own statistics (halts, wait-early and its vcpu_is_preempted share,
// kick-to-run latency). Rates are per second of measured time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pvlock::reproduce {

std::string explain_run(const nlohmann::ordered_json& run);

}  // namespace pvlock::reproduce
