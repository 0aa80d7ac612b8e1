// SPDX-License-Identifier: GPL-2.0-only
// Internal to the scenario parser: a guard in front of toml++.
//
// toml++ 3.3 (the Debian 12 package) reaches __builtin_unreachable() -- undefined behaviour,
// found by tests/fuzz/scenario_fuzz.cpp -- when it asks whether some non-ASCII code points
// (U+00A1..U+0499, U+2D6E..U+3167, U+FCFE..U+FEFE, roughly) are whitespace, which it does
// wherever it expects a token or scans a bad one (upstream marzer/tomlplusplus#190, #295).
// So it never sees them: guard() swaps each for a private-use stand-in (one code point for
// one, so line:column positions stay right) and unguard() swaps them back in every string
// the parser reads out of the document.
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

// Writes the guarded text to `out`; a problem if `text` already holds a stand-in character.
std::optional<TextProblem> guard(std::string_view text, std::string& out);
std::string unguard(std::string_view s);

}  // namespace pvlock::scenario::detail
