// SPDX-License-Identifier: GPL-2.0-only
#include "calibrate/spread.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace pvlock::calibrate {
namespace {

// Linear interpolation between closest ranks (the usual definition of a sample quantile).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

Spread summarize(std::vector<double> samples) {
  Spread s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = quantile(samples, 0.5);
  s.p25 = quantile(samples, 0.25);
  s.p75 = quantile(samples, 0.75);
  s.min = samples.front();
  s.max = samples.back();
  s.reps = static_cast<int>(samples.size());
  return s;
}

nlohmann::ordered_json to_json(const Spread& s) {
  return {{"median", s.median}, {"p25", s.p25}, {"p75", s.p75},
          {"min", s.min},       {"max", s.max}, {"reps", s.reps}};
}

Spread spread_from_json(const nlohmann::json& j) {
  Spread s;
  s.median = j.at("median").get<double>();
  s.p25 = j.at("p25").get<double>();
  s.p75 = j.at("p75").get<double>();
  s.min = j.at("min").get<double>();
  s.max = j.at("max").get<double>();
  s.reps = j.at("reps").get<int>();
  return s;
}

std::string describe(const Spread& s, const std::string& unit) {
  return fmt::format("{:.4g} {} (IQR {:.4g}-{:.4g}, min {:.4g}, max {:.4g}, {} samples)", s.median,
                     unit, s.p25, s.p75, s.min, s.max, s.reps);
}

}  // namespace pvlock::calibrate
