// SPDX-License-Identifier: GPL-2.0-only
// The outcome fields of a torture run, shared by `pvlock torture --json` (both worlds) and
// the simulator's torture workload report, so the two print the same names.
#pragma once

#include <nlohmann/json.hpp>

#include "native/torture.hpp"

namespace pvlock::output {

inline void torture_outcome_json(nlohmann::ordered_json& j, const native::TortureResult& r) {
  j["acquisitions"] = r.acquisitions;
  j["read_acquisitions"] = r.read_acquisitions;
  j["violations"] = r.violations;
  j["per_thread"] = {{"min", r.min_per_thread}, {"max", r.max_per_thread}};
  j["starvation"] = r.starvation;
  j["max_wait_ns"] = r.max_wait_ns;
  j["stuck"] = r.stuck;
  j["verdict"] = r.success() ? "SUCCESS" : "FAILURE";
}

}  // namespace pvlock::output
