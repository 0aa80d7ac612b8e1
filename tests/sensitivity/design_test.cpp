// SPDX-License-Identifier: GPL-2.0-only
#include "sensitivity/design.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace pvlock::sensitivity {
namespace {

TEST(Morris, EachStepMovesOneConstantByDeltaOnTheGrid) {
  const int k = 5, r = 6;
  const Design d = morris(k, r, 7);
  ASSERT_EQ(d.rows.size(), static_cast<std::size_t>(r * (k + 1)));
  for (int t = 0; t < r; ++t) {
    std::set<int> moved;
    for (int i = 1; i <= k; ++i) {
      const std::size_t row = static_cast<std::size_t>(t * (k + 1) + i);
      const int j = d.step_of[row];
      ASSERT_GE(j, 0);
      moved.insert(j);
      for (int c = 0; c < k; ++c) {
        const double du =
            d.rows[row][static_cast<std::size_t>(c)] - d.rows[row - 1][static_cast<std::size_t>(c)];
        if (c == j)
          EXPECT_NEAR(std::fabs(du), kMorrisDelta, 1e-12);
        else
          EXPECT_EQ(du, 0);
        const double level = d.rows[row][static_cast<std::size_t>(c)] * (kMorrisLevels - 1);
        EXPECT_NEAR(level, std::round(level), 1e-12);
        EXPECT_GE(d.rows[row][static_cast<std::size_t>(c)], 0);
        EXPECT_LE(d.rows[row][static_cast<std::size_t>(c)], 1);
      }
    }
    EXPECT_EQ(moved.size(), static_cast<std::size_t>(k)) << "trajectory " << t;
    EXPECT_EQ(d.step_of[static_cast<std::size_t>(t * (k + 1))], -1);
  }
}

TEST(Morris, SameSeedSameDesignOtherSeedOther) {
  EXPECT_EQ(morris(4, 3, 1).rows, morris(4, 3, 1).rows);
  EXPECT_NE(morris(4, 3, 1).rows, morris(4, 3, 2).rows);
}

TEST(Lhs, OneRowInEveryStratumOfEveryConstant) {
  const int k = 3, n = 10;
  const Design d = lhs(k, n, 3);
  ASSERT_EQ(d.rows.size(), static_cast<std::size_t>(n));
  for (int j = 0; j < k; ++j) {
    std::set<int> strata;
    for (const auto& row : d.rows)
      strata.insert(static_cast<int>(row[static_cast<std::size_t>(j)] * n));
    EXPECT_EQ(strata.size(), static_cast<std::size_t>(n));
  }
}

TEST(ToValue, LinearOrGeometricOverTheRange) {
  model::Constant lin;
  lin.range = model::Range{600, 800, ""};
  EXPECT_FALSE(log_scale(lin));
  EXPECT_DOUBLE_EQ(to_value(lin, 0.5), 700);
  model::Constant geo;
  geo.range = model::Range{1000, 16000, ""};
  EXPECT_TRUE(log_scale(geo));
  EXPECT_NEAR(to_value(geo, 0.5), 4000, 1e-9);
  geo.integer = true;
  EXPECT_EQ(to_value(geo, 1.0 / 3), std::round(1000 * std::pow(16.0, 1.0 / 3)));
}

}  // namespace
}  // namespace pvlock::sensitivity
