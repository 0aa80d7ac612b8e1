// SPDX-License-Identifier: GPL-2.0-only
// The ranges of the flags several commands share: --seeds and --jobs mean the same thing
// everywhere (seeds per point or cell; simulations at once), so they take the same values
// and are refused with the same message.
#pragma once

#include <fmt/core.h>

#include "cli/commands.hpp"

namespace pvlock::cli {

inline constexpr long long kMaxSeeds = 1000;
inline constexpr long long kMaxJobs = 256;

inline void check_flag_range(const char* flag, long long v, long long hi) {
  if (v < 1 || v > hi)
    throw UsageError(fmt::format("{}: must be between 1 and {}, got {}", flag, hi, v));
}
inline void check_seeds(long long v) { check_flag_range("--seeds", v, kMaxSeeds); }
inline void check_jobs(long long v) { check_flag_range("--jobs", v, kMaxJobs); }

}  // namespace pvlock::cli
