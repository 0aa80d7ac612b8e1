// SPDX-License-Identifier: GPL-2.0-only
// Helpers shared by the scenario tests.
#pragma once

#include <string>
#include <vector>

#include "scenario/parse.hpp"

namespace pvlock::scenario::testing {

// A minimal valid virtualized scenario and a minimal bare-metal one.
inline constexpr const char* kVirt = R"([host]
[[vm]]
vcpus = 2
[vm.workload]
type = "lockloop"
)";
inline constexpr const char* kBare = R"([workload]
type = "lockloop"
)";

// The error message parsing `text` as "t.toml" gives, or "" if it parses.
inline std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    (void)parse_scenario(text, "t.toml", sets);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace pvlock::scenario::testing
