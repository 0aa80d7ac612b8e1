// SPDX-License-Identifier: GPL-2.0-only
// The text profile of `pvlock run`: busiest symbol first, shares adding up to 100.00 %.
#include "output/profile_text.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::output {
namespace {

TEST(ProfileText, SortedByShareAndSumsToExactlyHundred) {
  // Thirds: each exact share is 33.333...%, rounded down they would add up to 99.99 %.
  nlohmann::ordered_json s;
  s["a"] = {{"ns", 1.0}, {"pct", 0.0}};
  s["b"] = {{"ns", 1.0}, {"pct", 0.0}};
  s["c"] = {{"ns", 1.0}, {"pct", 0.0}};
  s["d"] = {{"ns", 3.0}, {"pct", 0.0}};
  const auto rows = profile_rows(s);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].first, "d");
  EXPECT_EQ(rows[0].second, 5000);
  std::int64_t sum = 0;
  for (const auto& [name, h] : rows) sum += h;
  EXPECT_EQ(sum, 10000);
  // Ties keep the JSON's symbol order.
  EXPECT_EQ(rows[1].first, "a");
  EXPECT_EQ(rows[3].first, "c");
}

TEST(ProfileText, RunProfileIsDescendingAndComplete) {
  const auto sc = scenario::parse_scenario(R"(
[run]
duration_ms = 5
warmup_ms = 1
[machine]
cores_per_socket = 4
[host]
[[vm]]
name = "vm"
count = 2
vcpus = 4
[vm.guest]
lock = "pvqspinlock"
[vm.workload]
type = "lockloop"
hold_ns = 1000
)",
                                           "inline.toml");
  const auto j = harness::run_to_json(sc);
  ASSERT_TRUE(j["profile"].contains("vm0"));
  for (const auto& [vm, p] : j["profile"].items()) {
    const auto rows = profile_rows(p["symbols"]);
    ASSERT_GE(rows.size(), 2u) << vm;
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      sum += rows[i].second;
      if (i > 0) {
        EXPECT_GE(rows[i - 1].second, rows[i].second) << vm << " row " << i;
      }
    }
    EXPECT_EQ(sum, 10000) << vm;
  }
}

}  // namespace
}  // namespace pvlock::output
