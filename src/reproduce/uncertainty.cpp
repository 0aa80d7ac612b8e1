// SPDX-License-Identifier: GPL-2.0-only
#include "reproduce/uncertainty.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace pvlock::reproduce {

namespace {
double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / static_cast<double>(v.size());
}

// Sample covariance of a and b (n - 1 in the denominator); 0 for fewer than two values.
double covariance(const std::vector<double>& a, double ma, const std::vector<double>& b,
                  double mb) {
  if (a.size() < 2 || a.size() != b.size()) return 0;
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - ma) * (b[i] - mb);
  return s / static_cast<double>(a.size() - 1);
}
}  // namespace

double ratio_standard_error(const std::vector<double>& a, const std::vector<double>& b) {
  const double ma = mean_of(a), mb = mean_of(b);
  if (!std::isfinite(ma) || !std::isfinite(mb) || ma == 0 || mb == 0) return INFINITY;
  const auto na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double rel_var =
      covariance(a, ma, a, ma) / (na * ma * ma) + covariance(b, mb, b, mb) / (nb * mb * mb);
  if (a.size() == b.size()) rel_var -= 2 * covariance(a, ma, b, mb) / (na * ma * mb);
  const double r = ma / mb;
  // Perfectly correlated cells can leave a rounding residue below zero.
  return std::fabs(r) * std::sqrt(std::max(0.0, rel_var));
}

bool verdict_resolved(double value, double margin, double low, double high) {
  if (!std::isfinite(value) || std::isnan(margin)) return false;
  const bool inside = low <= value && value <= high;
  if (inside) return value - margin >= low && value + margin <= high;
  return value + margin < low || value - margin > high;
}

}  // namespace pvlock::reproduce
