// SPDX-License-Identifier: GPL-2.0-only
// Screening designs over a box of constants: Morris elementary-effects trajectories and a
// Latin-hypercube sample. Points live in the unit cube; to_value() maps a coordinate onto a
// constant's range. Deterministic: the same arguments give the same design on every build.
#pragma once

#include <cstdint>
#include <vector>

#include "model/constants.hpp"

namespace pvlock::sensitivity {

// Morris' four-level grid: levels 0, 1/3, 2/3, 1 and the step Delta = 2/3.
inline constexpr int kMorrisLevels = 4;
inline constexpr double kMorrisDelta = 2.0 / 3.0;

struct Design {
  // rows[i][j]: constant j's coordinate in [0, 1] at design point i.
  std::vector<std::vector<double>> rows;
  // Morris only: row i (i % (k + 1) != 0) moved constant step_of[i] from the row before it
  // by +-Delta; step_of[i] = -1 for the first row of each trajectory and for LHS rows.
  std::vector<int> step_of;
};

// `trajectories` Morris trajectories of k + 1 rows each.
Design morris(int k, int trajectories, std::uint64_t seed);
// `samples` Latin-hypercube rows: each constant's [0, 1] cut into `samples` strata, one row
// in each.
Design lhs(int k, int samples, std::uint64_t seed);

// A constant's value at coordinate u: linear over its range, or geometric when the range
// spans a factor of 4 or more (and starts above 0).
double to_value(const model::Constant& c, double u);
bool log_scale(const model::Constant& c);

}  // namespace pvlock::sensitivity
