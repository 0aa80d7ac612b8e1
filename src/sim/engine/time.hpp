// SPDX-License-Identifier: GPL-2.0-only
// Simulated time: signed 64-bit nanoseconds since the start of a run (292 years of range).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace pvlock::sim {

using Time = std::int64_t;

inline constexpr Time kNever = std::numeric_limits<Time>::max();

// The nearest whole nanosecond, halves away from zero: what std::llround returns for every
// finite |ns| < 2^63, without its library call (the simulator rounds a cost at every memory
// access and every wait). Exact: the truncation is exact in that range, and so is the
// fraction it leaves (zero from 2^52 on, where every double is a whole number).
inline Time round_ns(double ns) {
  auto t = static_cast<Time>(ns);
  const double frac = ns - static_cast<double>(t);
  if (frac >= 0.5)
    ++t;
  else if (frac <= -0.5)
    --t;
  return t;
}

// A cost or delay in whole nanoseconds, never negative.
inline Time nonneg_ns(double ns) { return round_ns(std::max(0.0, ns)); }

}  // namespace pvlock::sim
