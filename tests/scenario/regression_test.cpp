// Inputs the fuzzer (tests/fuzz/scenario_fuzz.cpp) found: each must give a clean
// ScenarioError (or parse), never undefined behaviour.
#include <gtest/gtest.h>

#include <string>

#include "scenario/parse.hpp"
#include "scenario_test_util.hpp"

namespace pvlock::scenario {
namespace {

using testing::error_of;

// toml++ 3.3 reached __builtin_unreachable() classifying U+FCFF (and U+00A1..U+0499, ...)
// as whitespace outside a string (crash-f812e4577ce10734a06c3345d84e4fc78ec83969).
TEST(FuzzRegression, NonAsciiOutsideStrings) {
  EXPECT_EQ(error_of("-\xef\xb3\xbf\x01ost\x06"),
            "t.toml:1:2: syntax error: non-ASCII character outside a string or comment");
  EXPECT_EQ(error_of("a = 1\xc2\xa7\n"),
            "t.toml:1:6: syntax error: non-ASCII character outside a string or comment");
  EXPECT_EQ(error_of("[run]\nseed = 1979-05-27T07:32:00\xc2\xa7\n"),
            "t.toml:2:27: syntax error: non-ASCII character outside a string or comment");
  EXPECT_EQ(error_of("a = \"x\"\xc2\xa7\n"),
            "t.toml:1:8: syntax error: non-ASCII character outside a string or comment");
}

TEST(FuzzRegression, NonAsciiAfterLineEndingBackslash) {
  EXPECT_EQ(error_of("[workload]\ntype = \"\"\"\\\n  \xc2\xa7\"\"\"\n"),
            "t.toml:3:3: syntax error: a non-ASCII character right after a line-ending "
            "backslash is not supported (toml++ 3.3 bug marzer/tomlplusplus#190); start the "
            "line with an ASCII character or an escape");
  EXPECT_EQ(error_of("[workload]\ntype = \"\"\"\\\xc2\xa7\"\"\"\n"),
            "t.toml:2:12: syntax error: non-ASCII character right after a backslash");
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
