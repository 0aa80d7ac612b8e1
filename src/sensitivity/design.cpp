// SPDX-License-Identifier: GPL-2.0-only
#include "sensitivity/design.hpp"

#include <cmath>
#include <numeric>
#include <utility>

namespace pvlock::sensitivity {

namespace {

// splitmix64: a portable generator (the standard distributions differ between libraries).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  void shuffle(std::vector<int>& v) {
    for (int i = static_cast<int>(v.size()) - 1; i > 0; --i)
      std::swap(v[static_cast<std::size_t>(i)], v[static_cast<std::size_t>(below(i + 1))]);
  }
};

}  // namespace

Design morris(int k, int trajectories, std::uint64_t seed) {
  Design d;
  Rng rng{seed};
  constexpr double kStep = 1.0 / (kMorrisLevels - 1);
  for (int t = 0; t < trajectories; ++t) {
    std::vector<double> x(static_cast<std::size_t>(k));
    for (double& v : x) v = kStep * rng.below(kMorrisLevels);
    d.rows.push_back(x);
    d.step_of.push_back(-1);
    std::vector<int> order(static_cast<std::size_t>(k));
    std::iota(order.begin(), order.end(), 0);
    rng.shuffle(order);
    for (int j : order) {
      double& v = x[static_cast<std::size_t>(j)];
      // Up from the lower half of the grid, down from the upper half: every step stays inside.
      v = v + kMorrisDelta <= 1 + 1e-12 ? v + kMorrisDelta : v - kMorrisDelta;
      v = std::round(v * (kMorrisLevels - 1)) / (kMorrisLevels - 1);
      d.rows.push_back(x);
      d.step_of.push_back(j);
    }
  }
  return d;
}

Design lhs(int k, int samples, std::uint64_t seed) {
  Design d;
  Rng rng{seed};
  d.rows.assign(static_cast<std::size_t>(samples),
                std::vector<double>(static_cast<std::size_t>(k)));
  d.step_of.assign(static_cast<std::size_t>(samples), -1);
  for (int j = 0; j < k; ++j) {
    std::vector<int> strata(static_cast<std::size_t>(samples));
    std::iota(strata.begin(), strata.end(), 0);
    rng.shuffle(strata);
    for (int i = 0; i < samples; ++i)
      d.rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
          (strata[static_cast<std::size_t>(i)] + rng.unit()) / samples;
  }
  return d;
}

bool log_scale(const model::Constant& c) {
  return c.range && c.range->low > 0 && c.range->high >= 4 * c.range->low;
}

double to_value(const model::Constant& c, double u) {
  const double lo = c.range->low, hi = c.range->high;
  const double v = log_scale(c) ? lo * std::pow(hi / lo, u) : lo + u * (hi - lo);
  return c.integer ? std::round(v) : v;
}

}  // namespace pvlock::sensitivity
