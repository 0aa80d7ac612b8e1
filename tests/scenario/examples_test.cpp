// SPDX-License-Identifier: GPL-2.0-only
// Every scenario shipped in examples/ and experiments/ parses (globbed at test time; zero
// files is fine).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "scenario/parse.hpp"

namespace pvlock::scenario {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> shipped_scenarios() {
  std::vector<fs::path> out;
  const fs::path root = PVLOCK_SOURCE_DIR;
  if (fs::is_directory(root / "examples"))
    for (const auto& e : fs::directory_iterator(root / "examples"))
      if (e.path().extension() == ".toml") out.push_back(e.path());
  if (fs::is_directory(root / "experiments"))
    for (const auto& e : fs::recursive_directory_iterator(root / "experiments"))
      // experiment.toml files describe reproduction cells (pvlock reproduce), not scenarios.
      if (e.path().extension() == ".toml" && e.path().filename() != "experiment.toml")
        out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ShippedScenarios, AllParse) {
  const auto files = shipped_scenarios();
  for (const fs::path& p : files) {
    SCOPED_TRACE(p.string());
    try {
      (void)load_scenario_file(p.string());
    } catch (const ScenarioError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  RecordProperty("files", static_cast<int>(files.size()));
}

}  // namespace
}  // namespace pvlock::scenario
