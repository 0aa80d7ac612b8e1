// SPDX-License-Identifier: GPL-2.0-only
// Scenario files: TOML text -> a validated Scenario (see scenario.hpp for the layout).
//
// Every error is a ScenarioError whose what() is exactly
//   "FILE:LINE:COL: key.path: message"   for an error at a place in the file, or
//   "--set key.path=value: message"       for an error in a command-line override.
// Nothing is silently defaulted: unknown keys, wrong types, out-of-range values, missing
// required values and nonsensical combinations are all errors.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/scenario.hpp"

namespace pvlock::scenario {

struct ScenarioError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads the file, applies overrides ("key.path=value", array elements as vm[0].count=3; the
// value is parsed as TOML, a bare word is a string), validates everything.
Scenario load_scenario_file(const std::string& path,
                            const std::vector<std::string>& overrides = {});
Scenario parse_scenario(std::string_view toml_text, const std::string& source_name,
                        const std::vector<std::string>& overrides = {});

// The message prefix for a place: "FILE:LINE:COL: key.path" or "--set key.path=value".
std::string describe(const SourceRef& where);

// Helpers for workloads that validate their own [workload] parameters. They throw
// ScenarioError naming the parameter's place (or override) and key path.
[[noreturn]] void fail_at(const SourceRef& where, const std::string& message);
double param_double(const WorkloadSpec& w, std::string_view key, double fallback, double lo,
                    double hi);
std::int64_t param_int(const WorkloadSpec& w, std::string_view key, std::int64_t fallback,
                       std::int64_t lo, std::int64_t hi);
bool param_bool(const WorkloadSpec& w, std::string_view key, bool fallback);
std::string param_string(const WorkloadSpec& w, std::string_view key, std::string fallback,
                         std::span<const std::string_view> allowed);
// A number (constant ns) or a {dist = ...} table; either way every value must be >= 0.
Dist param_dist(const WorkloadSpec& w, std::string_view key, Dist fallback);
// After a workload read its parameters: any key it did not ask for is an error
// ("unknown key 'x' in [workload] of type lockloop; known: ...").
void reject_unknown_params(const WorkloadSpec& w, std::span<const std::string_view> known);

}  // namespace pvlock::scenario
