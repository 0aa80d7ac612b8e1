// SPDX-License-Identifier: GPL-2.0-only
// Shared by the host tests: run a scenario (inline TOML or a shipped file) to its JSON
// result, and read a lock-event counter from it (0 when the lock never counted it).
#pragma once

#include <string>
#include <vector>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::sim::test {

inline nlohmann::ordered_json run_toml(const char* toml, const char* name,
                                       const std::vector<std::string>& overrides) {
  return harness::run_to_json(scenario::parse_scenario(toml, name, overrides));
}

inline nlohmann::ordered_json run_file(const std::string& path,
                                       const std::vector<std::string>& overrides) {
  return harness::run_to_json(scenario::load_scenario_file(path, overrides));
}

inline double counter(const nlohmann::ordered_json& j, const char* name) {
  const auto& c = j.at("counters");
  return c.contains(name) ? c.at(name).get<double>() : 0.0;
}

}  // namespace pvlock::sim::test
