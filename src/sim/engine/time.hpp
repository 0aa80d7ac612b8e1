// Simulated time: signed 64-bit nanoseconds since the start of a run (292 years of range).
#pragma once

#include <cstdint>
#include <limits>

namespace pvlock::sim {

using Time = std::int64_t;

inline constexpr Time kNever = std::numeric_limits<Time>::max();

}  // namespace pvlock::sim
