// SPDX-License-Identifier: GPL-2.0-only
// --vary parsing and point enumeration.
#include "sweep/vary.hpp"

#include <gtest/gtest.h>

namespace pvlock::sweep {
namespace {

std::string error_of(const std::string& arg) {
  try {
    (void)parse_vary(arg);
  } catch (const SweepError& e) {
    return e.what();
  }
  return "";
}

TEST(Vary, ParsesKeyAndValues) {
  const Vary v = parse_vary("vm[0].guest.lock=qspinlock, pvqspinlock");
  EXPECT_EQ(v.key, "vm[0].guest.lock");
  EXPECT_EQ(v.values, (std::vector<std::string>{"qspinlock", "pvqspinlock"}));
}

TEST(Vary, CommasInsideTablesAndStringsDoNotSplit) {
  const Vary v = parse_vary("vm[0].workload.hold={dist=\"exp\", mean=3},\"a,b\",[1,2]");
  EXPECT_EQ(v.values, (std::vector<std::string>{"{dist=\"exp\", mean=3}", "\"a,b\"", "[1,2]"}));
}

TEST(Vary, Errors) {
  EXPECT_EQ(error_of("vm[0].count"), "--vary vm[0].count: expected KEY=V1,V2,...");
  EXPECT_EQ(error_of("=1,2"), "--vary =1,2: empty key");
  EXPECT_EQ(error_of("a=1,,2"), "--vary a=1,,2: empty value in the list");
  EXPECT_EQ(error_of("a="), "--vary a=: empty value in the list");
  EXPECT_EQ(error_of("a=1,1"), "--vary a=1,1: value '1' is listed twice");
  EXPECT_EQ(error_of("a={x=1"), "--vary a={x=1: unbalanced quotes or brackets in the value list");
}

TEST(Vary, EnumerateIsTheCartesianProductFirstKeySlowest) {
  const auto combos = enumerate({parse_vary("a=x,y"), parse_vary("b=1,2,3")});
  ASSERT_EQ(combos.size(), 6u);
  EXPECT_EQ(combos[0].sets, (std::vector<std::string>{"a=x", "b=1"}));
  EXPECT_EQ(combos[1].sets, (std::vector<std::string>{"a=x", "b=2"}));
  EXPECT_EQ(combos[5].sets, (std::vector<std::string>{"a=y", "b=3"}));
  EXPECT_EQ(combos[4].point.dump(), R"({"a":"y","b":2})");
  EXPECT_EQ(enumerate({}).size(), 1u);  // no --vary: one point
}

TEST(Vary, EnumerateRejectsDuplicateKeysAndSeed) {
  EXPECT_THROW(enumerate({parse_vary("a=1"), parse_vary("a=2")}), SweepError);
  try {
    enumerate({parse_vary("run.seed=1,2")});
  } catch (const SweepError& e) {
    EXPECT_STREQ(e.what(), "--vary run.seed: use --seeds N to run each point with N seeds");
  }
}

TEST(Vary, TypedValues) {
  EXPECT_EQ(typed_value("3"), 3);
  EXPECT_EQ(typed_value("-2"), -2);
  EXPECT_EQ(typed_value("2.5"), 2.5);
  EXPECT_EQ(typed_value("true"), true);
  EXPECT_EQ(typed_value("\"x y\""), "x y");
  EXPECT_EQ(typed_value("mcs"), "mcs");
  EXPECT_EQ(typed_value("{a=1}"), "{a=1}");
}

}  // namespace
}  // namespace pvlock::sweep
