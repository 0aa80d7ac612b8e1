// SPDX-License-Identifier: GPL-2.0-only
// Internal to the scenario parser: command-line overrides ("--set key.path=value") applied
// to the parsed TOML document before it is validated.
#pragma once

#include <string>
#include <vector>

#include "scenario/reader.hpp"
#include "scenario/toml.hpp"

namespace pvlock::scenario::detail {

// Applies each "key.path=value" in order (the value is parsed as a TOML value; anything that
// does not parse is a bare-word string). Missing keys and tables are created; indexing a
// missing array element, or walking through a non-table, is a ScenarioError naming the
// override. Returns the overrides with canonical key paths, for error messages.
std::vector<Override> apply_overrides(toml::table& root, const std::vector<std::string>& sets);

}  // namespace pvlock::scenario::detail
