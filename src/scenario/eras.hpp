// SPDX-License-Identifier: GPL-2.0-only
// Kernel era profiles: `kernel = "5.3"` in a guest section ([vm.guest] or bare metal's
// [guest]) or in [host] sets every era switch of that side to the value the named upstream
// release has. An era switch is a scenario key whose upstream behaviour changed at a known
// commit; the table here names that commit and the release it first appeared in
// (docs/eras.md is the prose version, checked against this table by a test).
//
// A key written explicitly in the scenario (or by --set) overrides the profile, so a
// scenario can name the kernel it models and still keep a model choice that differs from it
// -- every such override in experiments/ and validation/ says why.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace pvlock::scenario::eras {

// An upstream release, major.minor.
struct Version {
  int major = 0;
  int minor = 0;
  friend constexpr auto operator<=>(const Version&, const Version&) = default;
};

using Value = std::variant<bool, std::int64_t, std::string_view>;

// From `since` on (the first release containing the change), the switch has `value`.
struct Step {
  Version since;
  Value value;
  std::string_view commit;  // upstream commit id (12 hex digits) and subject
};

struct EraSwitch {
  // The key as written in the section: "wait_early"; in [host], "kvm.pv_unhalt"-style keys
  // live in the [host.kvm] sub-table.
  std::string_view key;
  std::string_view what;  // what the switch models
  Value oldest;           // the value in the oldest profile (before every step)
  std::span<const Step> steps;
};

enum class Side { guest, host };

std::span<const EraSwitch> switches(Side side);

// "5.3" -> {5, 3} if it is a profile (a release from kOldest to kNewest), else nullopt.
std::optional<Version> find_profile(std::string_view name);
// "4.2 to 6.12 (any release in between, e.g. \"5.3\")", for error messages.
std::string profile_range();
std::string to_string(Version v);
std::string to_string(const Value& v);

// The switch's value in the profile `v`.
Value value_in(const EraSwitch& s, Version v);

}  // namespace pvlock::scenario::eras
