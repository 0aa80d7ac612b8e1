// SPDX-License-Identifier: GPL-2.0-only
// `pvlock summarize`: per point and VM, the mean, standard deviation and 95% confidence
// interval (Student t) of the VM's score across seeds.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/results.hpp"

namespace pvlock::sweep {

struct SummaryRow {
  nlohmann::ordered_json point;
  std::string vm;
  std::string unit;
  std::size_t n = 0;  // seeds
  double mean = 0;
  double stddev = 0;  // sample standard deviation (0 for one seed)
  double ci_low = 0;  // mean -/+ t(0.975, n-1) * stddev / sqrt(n); = mean for one seed
  double ci_high = 0;
};

// Two-sided 95% Student t quantile for `df` degrees of freedom (df >= 1).
double t975(std::size_t df);

// Rows in order of first appearance (point, then VM). SweepError if a result has no
// "vms" array of {name, score}.
std::vector<SummaryRow> summarize(const std::vector<ResultLine>& lines);
std::string format_table(const std::vector<SummaryRow>& rows);
std::string format_csv(const std::vector<SummaryRow>& rows);

}  // namespace pvlock::sweep
