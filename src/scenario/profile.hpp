// SPDX-License-Identifier: GPL-2.0-only
// Internal to the scenario parser: applying a section's `kernel = "X.Y"` era profile
// (eras.hpp) before the section is read.
#pragma once

#include <string>

#include "scenario/eras.hpp"
#include "scenario/reader.hpp"

namespace pvlock::scenario::detail {

// The table to read for the section `t` at `path`: `t` itself when it names no profile, else
// `storage`, a copy of `t` with every era switch of `side` that `t` does not set (from the
// file or a --set override) set to the profile's value. `kernel` receives the profile's
// name. An unknown profile or a non-string `kernel` is an error naming the key.
const toml::table& with_profile(const Reader& r, const toml::table& t, const std::string& path,
                                const std::string& title, eras::Side side, toml::table& storage,
                                std::string& kernel);

}  // namespace pvlock::scenario::detail
