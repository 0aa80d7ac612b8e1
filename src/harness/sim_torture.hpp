// SPDX-License-Identifier: GPL-2.0-only
// `pvlock torture --world sim`: the torture workload (workload/torture.hpp) run as a
// scenario of its own, with its verdict in the native harness's terms.
#pragma once

#include <string>
#include <vector>

#include "native/torture.hpp"

namespace pvlock::harness {

// `pvlock torture --world sim`: the torture workload on a bare-metal simulated machine with
// o.threads CPUs (one writer each, plus o.readers reader tasks) for o.duration_s simulated
// seconds; the result in the native harness's terms. `overrides` are scenario overrides as
// `pvlock run --set` takes them for a bare-metal scenario ("faults.drop_kick=0.01",
// "workload.irqs_off=true", "guest.spin_threshold=1"), applied to that scenario. Throws
// std::invalid_argument for an unknown lock and scenario::ScenarioError for a bad override.
native::TortureResult run_sim_torture(const native::TortureOptions& o,
                                      const std::vector<std::string>& overrides = {});

}  // namespace pvlock::harness
