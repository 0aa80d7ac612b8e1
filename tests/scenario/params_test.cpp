// SPDX-License-Identifier: GPL-2.0-only
// The helpers workloads use to validate their own [workload] parameters.
#include <gtest/gtest.h>

#include <array>
#include <string_view>

#include "scenario/parse.hpp"
#include "scenario_test_util.hpp"

namespace pvlock::scenario {
namespace {

WorkloadSpec spec() {
  return parse_scenario(std::string(testing::kBare) +
                            "n = 3\nx = 2.5\nflag = true\nmode = \"b\"\nhold = 40\n"
                            "think = {dist = \"exp\", mean = 7}\n",
                        "p.toml", {"workload.over=5"})
      .vms[0]
      .workload;
}

std::string error_of(void (*f)(const WorkloadSpec&)) {
  try {
    f(spec());
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(Params, ReadValuesAndFallbacks) {
  const WorkloadSpec w = spec();
  EXPECT_EQ(param_int(w, "n", 1, 0, 10), 3);
  EXPECT_EQ(param_int(w, "absent", 9, 0, 10), 9);
  EXPECT_EQ(param_double(w, "x", 0, 0, 10), 2.5);
  EXPECT_EQ(param_double(w, "n", 0, 0, 10), 3.0);  // an integer is a number
  EXPECT_TRUE(param_bool(w, "flag", false));
  const std::array<std::string_view, 2> modes{"a", "b"};
  EXPECT_EQ(param_string(w, "mode", "a", modes), "b");
  EXPECT_EQ(param_dist(w, "hold", {}).kind, Dist::Kind::constant);
  EXPECT_EQ(param_dist(w, "hold", {}).mean, 40);
  EXPECT_EQ(param_dist(w, "think", {}).kind, Dist::Kind::exponential);
  EXPECT_EQ(param_dist(w, "absent", Dist{Dist::Kind::constant, 5}).mean, 5);
}

TEST(Params, Errors) {
  EXPECT_EQ(error_of([](const WorkloadSpec& w) { (void)param_int(w, "n", 0, 5, 10); }),
            "p.toml:3:5: workload.n: must be between 5 and 10, got 3");
  EXPECT_EQ(error_of([](const WorkloadSpec& w) { (void)param_int(w, "x", 0, 0, 10); }),
            "p.toml:4:5: workload.x: expected an integer, got a float");
  EXPECT_EQ(error_of([](const WorkloadSpec& w) { (void)param_double(w, "x", 0, 3, 4); }),
            "p.toml:4:5: workload.x: must be between 3 and 4, got 2.5");
  EXPECT_EQ(error_of([](const WorkloadSpec& w) { (void)param_bool(w, "n", false); }),
            "p.toml:3:5: workload.n: expected true or false, got an integer");
  EXPECT_EQ(error_of([](const WorkloadSpec& w) {
              const std::array<std::string_view, 1> only{"a"};
              (void)param_string(w, "mode", "a", only);
            }),
            "p.toml:6:8: workload.mode: unknown value 'b'; valid: a");
  EXPECT_EQ(error_of([](const WorkloadSpec& w) { (void)param_dist(w, "mode", {}); }),
            "p.toml:6:8: workload.mode: expected a number (ns) or a {dist = ...} table, got a "
            "string");
  EXPECT_EQ(error_of([](const WorkloadSpec& w) { (void)param_int(w, "over", 0, 6, 7); }),
            "--set workload.over=5: must be between 6 and 7, got 5");
}

TEST(Params, RejectUnknownNamesTheFirstInFileOrder) {
  EXPECT_EQ(error_of([](const WorkloadSpec& w) {
              const std::array<std::string_view, 3> known{"n", "x", "hold"};
              reject_unknown_params(w, known);
            }),
            "p.toml:5:8: workload.flag: unknown key 'flag' in [workload] of type lockloop; known: "
            "type, n, x, hold");
  const std::array<std::string_view, 6> all{"n", "x", "flag", "mode", "hold", "think"};
  EXPECT_EQ(error_of([](const WorkloadSpec& w) {
              const std::array<std::string_view, 6> all{"n", "x", "flag", "mode", "hold", "think"};
              reject_unknown_params(w, all);
            }),
            "--set workload.over=5: unknown key 'over' in [workload] of type lockloop; known: "
            "type, n, x, flag, mode, hold, think");
  (void)all;
}

TEST(Params, FailAtFormats) {
  SourceRef r{"f.toml", 3, 4, "vm[0].workload.k", ""};
  try {
    fail_at(r, "bad");
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "f.toml:3:4: vm[0].workload.k: bad");
  }
}

}  // namespace
}  // namespace pvlock::scenario
