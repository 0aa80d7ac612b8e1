// SPDX-License-Identifier: GPL-2.0-only
// Sweep points: --vary KEY=V1,V2,... lists and their cartesian product.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pvlock::sweep {

// A usage or input error (bad --vary, bad results file...): the CLI exits 2 with it.
struct SweepError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Vary {
  std::string key;                  // a scenario key path, as for --set ("vm[0].count")
  std::vector<std::string> values;  // as written
};

// Parses "KEY=V1,V2,..." (commas inside quotes, {} or [] do not split). Throws SweepError
// "--vary ARG: message" for an empty key or value, a malformed list, or duplicate values.
Vary parse_vary(const std::string& arg);
// Splits on top-level commas; nullopt-like empty result if quotes/brackets do not balance.
std::vector<std::string> split_values(std::string_view list, bool& balanced);

// One combination of vary values: the overrides that select it and its JSON description.
struct Combo {
  std::vector<std::string> sets;  // "key=value", one per --vary, in --vary order
  nlohmann::ordered_json point;   // {"key": value, ...} with numbers/booleans typed
};

// The cartesian product in --vary order (the first --vary changes slowest). Throws
// SweepError if a key is given twice or is run.seed (use --seeds).
std::vector<Combo> enumerate(const std::vector<Vary>& varies);

// "3" -> 3, "2.5" -> 2.5, "true" -> true, "\"x\"" -> "x", anything else -> the string.
nlohmann::ordered_json typed_value(std::string_view v);

}  // namespace pvlock::sweep
