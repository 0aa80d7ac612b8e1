// SPDX-License-Identifier: GPL-2.0-only
// Inputs the fuzzer (tests/fuzz/scenario_fuzz.cpp) found: each must give a clean
// ScenarioError (or parse), never undefined behaviour.
#include <gtest/gtest.h>

#include <string>

#include "scenario/parse.hpp"
#include "scenario_test_util.hpp"

namespace pvlock::scenario {
namespace {

using testing::error_of;

// toml++ 3.3 reached __builtin_unreachable() classifying U+FCFF, U+00A7, ... as whitespace
// where it expects a token or scans a bad one (fuzzer: crash-f812e457...,
// crash-a1024036...). The guard (toml_guard.hpp) hides them from it; errors still point at
// the right line and column and quote the original text.
TEST(FuzzRegression, NonAsciiWhereTomlExpectsATokenIsACleanError) {
  const std::string cases[] = {
      "-\xef\xb3\xbf\x01ost\x06",
      "a = 1\xc2\xa7\n",
      "[run]\nseed = 1979-05-27T07:32:00\xc2\xa7\n",
      "a = \"x\"\xc2\xa7\n",
      "a = tru\xc2\xa7\n",
      "99999=989\"\"\"un:::::::::::::::\xc6\x82\xc5\xc5\xc5\xc5\xc5\x91"
      "ax_cysles\n",
      "a = 1.\"\xc2\xa7\"\n",
      "\xc2\xa7",
      "[workload]\ntype = \"\"\"\\\n  \xc2\xa7\"\"\"\n",
      "[workload]\ntype = \"\"\"\\\xc2\xa7\"\"\"\n",
  };
  for (const std::string& c : cases) {
    const std::string e = error_of(c);
    EXPECT_TRUE(e.empty() || e.rfind("t.toml:", 0) == 0) << e;  // valid TOML may parse
    EXPECT_EQ(e.find("\xee"), std::string::npos) << "a stand-in leaked: " << e;
  }
  EXPECT_EQ(error_of("a = tru\xc2\xa7\n"),
            "t.toml:1:8: syntax error: Error while parsing boolean: expected 'true', saw "
            "'tru\xc2\xa7'");
}

TEST(FuzzRegression, GuardedCharactersSurviveInStringsAndKeys) {
  const std::string text =
      "[workload]\ntype = \"lockloop\"\n\"k\xc2\xa7\" = \"\xc2\xa7\xe3\x80\x80\xef\xb3\xbf\"\n"
      "ml = \"\"\"\\\n  x\xc2\xa7\"\"\"\n";
  const Scenario s = parse_scenario(text, "t.toml");
  const auto& p = s.vms[0].workload.params;
  ASSERT_EQ(p.count("k\xc2\xa7"), 1u);
  EXPECT_EQ(std::get<std::string>(p.at("k\xc2\xa7").value), "\xc2\xa7\xe3\x80\x80\xef\xb3\xbf");
  EXPECT_EQ(std::get<std::string>(p.at("ml").value), "x\xc2\xa7");
  EXPECT_EQ(error_of("[workload]\ntype = \"x\"\n\"\xc2\xa7\" = {dist = \"const\", mean = 1, "
                     "\"z\xc2\xa7\" = 2}\n"),
            "t.toml:3:34: workload.\xc2\xa7.z\xc2\xa7: unknown key 'z\xc2\xa7' in a distribution "
            "table; known: dist, mean");
}

TEST(FuzzRegression, StandInCharactersInTheInputAreRejected) {
  EXPECT_EQ(error_of("a = \"\xee\x80\x80\"\n"),
            "t.toml:1:6: syntax error: unsupported private-use character U+E000");
  EXPECT_EQ(error_of(testing::kBare, {"workload.x=\xee\x80\x80"}),
            "--set workload.x=\xee\x80\x80: unsupported private-use character U+E000");
}

// Non-ASCII text is fine where TOML allows it: strings and comments.
TEST(FuzzRegression, NonAsciiInStringsAndCommentsIsFine) {
  const std::string ok =
      "# 3 \xc2\xb5s hold, \xc2\xa7 4\n[workload]\ntype = \"lockloop\"  # caf\xc3\xa9\n"
      "label = \"\xc2\xa7 caf\xc3\xa9\"\nlit = '\xc2\xa7'\nml = \"\"\"\xc2\xa7\n\xc2\xa7\"\"\"\n"
      "ml2 = '''\xc2\xa7'''\nq = \"\"\"a\"\"\"\"\n";
  EXPECT_EQ(error_of(ok), "");
  const Scenario s = parse_scenario(ok, "t.toml");
  EXPECT_EQ(std::get<std::string>(s.vms[0].workload.params.at("label").value),
            "\xc2\xa7 caf\xc3\xa9");
  EXPECT_EQ(std::get<std::string>(s.vms[0].workload.params.at("q").value), "a\"");
}

TEST(FuzzRegression, NonAsciiOverrideValueIsABareString) {
  const Scenario s =
      parse_scenario(testing::kBare, "t.toml", {"workload.label=caf\xc3\xa9 \xc2\xa7"});
  EXPECT_EQ(std::get<std::string>(s.vms[0].workload.params.at("label").value),
            "caf\xc3\xa9 \xc2\xa7");
}

}  // namespace
}  // namespace pvlock::scenario
