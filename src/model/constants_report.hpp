// SPDX-License-Identifier: GPL-2.0-only
// The constant registry as `pvlock costs` prints it: a text table, JSON, and the Markdown
// page docs/costs.md is (a test compares the two).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pvlock::model {

std::string constants_text();
nlohmann::ordered_json constants_json();
std::string constants_markdown();

}  // namespace pvlock::model
