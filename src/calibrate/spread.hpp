// SPDX-License-Identifier: GPL-2.0-only
// A measured value and its spread over repetitions: median, interquartile range and the
// extremes. Machines are noisy (other processes, interrupts, a hypervisor stealing time), so
// every calibration constant carries the spread it was measured with.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pvlock::calibrate {

struct Spread {
  double median = 0;
  double p25 = 0;
  double p75 = 0;
  double min = 0;
  double max = 0;
  int reps = 0;  // samples
};

// Summarises the samples (any order); an empty input gives reps = 0 and zeros.
Spread summarize(std::vector<double> samples);

nlohmann::ordered_json to_json(const Spread& s);
Spread spread_from_json(const nlohmann::json& j);

// "47.1 ns (IQR 45.0-49.3, min 44.2, max 61.0, 9 reps)"
std::string describe(const Spread& s, const std::string& unit);

}  // namespace pvlock::calibrate
