// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target for the scenario loader: any input must give a Scenario or a
// ScenarioError, never a crash, hang, abort or another exception.
//
// Input: TOML text, optionally followed by NUL-separated --set overrides
// ("text\0vm[0].count=3\0guest.lock=tas"). The workload parameter helpers are exercised on
// every parameter with every type, as workloads would.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/parse.hpp"

namespace {

using namespace pvlock::scenario;

void exercise_params(const WorkloadSpec& w) {
  static const std::string_view kAllowed[] = {"a", "b"};
  std::vector<std::string_view> keys;
  for (const auto& [k, p] : w.params) keys.push_back(k);
  for (const auto& [k, p] : w.params) {
    try {
      (void)param_double(w, k, 0, 0, 1e9);
    } catch (const ScenarioError&) {
    }
    try {
      (void)param_int(w, k, 0, -5, 1'000'000);
    } catch (const ScenarioError&) {
    }
    try {
      (void)param_bool(w, k, false);
    } catch (const ScenarioError&) {
    }
    try {
      (void)param_string(w, k, "a", kAllowed);
    } catch (const ScenarioError&) {
    }
    try {
      (void)param_dist(w, k, Dist{});
    } catch (const ScenarioError&) {
    }
  }
  try {
    reject_unknown_params(w, std::span<const std::string_view>(keys).first(keys.size() / 2));
  } catch (const ScenarioError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  std::vector<std::string> sets;
  if (nul != std::string_view::npos) {
    std::string_view rest = input.substr(nul + 1);
    while (!rest.empty() && sets.size() < 16) {
      const std::size_t next = rest.find('\0');
      sets.emplace_back(rest.substr(0, next));
      rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
    }
  }
  try {
    const Scenario s = parse_scenario(text, "fuzz.toml", sets);
    for (const VmSpec& v : s.vms) exercise_params(v.workload);
  } catch (const ScenarioError& e) {
    // Every error names its place: "FILE:..." or "--set ...".
    const std::string_view what = e.what();
    if (what.rfind("fuzz.toml:", 0) != 0 && what.rfind("--set ", 0) != 0) __builtin_trap();
  }
  return 0;
}
