// Internal to the scenario parser: a guard in front of toml++.
//
// toml++ 3.3 (the Debian 12 package) reaches __builtin_unreachable() -- undefined behaviour,
// found by tests/fuzz/scenario_fuzz.cpp -- when it classifies some non-ASCII code points as
// whitespace (upstream issues marzer/tomlplusplus#190 and #295, fixed after 3.4). It only
// does so outside strings and comments, where a non-ASCII character is a TOML syntax error
// anyway, and right after a line-ending backslash in a """multi-line""" string. This scanner
// tracks strings and comments the way TOML does and reports those places first.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pvlock::scenario::detail {

struct TextProblem {
  int line = 1;
  int column = 1;  // in code points, like toml++
  std::string message;
};

std::optional<TextProblem> find_unsupported_text(std::string_view text);

}  // namespace pvlock::scenario::detail
