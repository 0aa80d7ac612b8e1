// SPDX-License-Identifier: GPL-2.0-only
// locktorture on real threads: the body of torture/body.hpp, one thread per writer and reader,
// with a watchdog for threads that cannot be stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "pvlock/lock/policy.hpp"
#include "torture/result.hpp"

namespace pvlock::native {

struct TortureOptions {
  std::string lock = "qspinlock";
  int threads = 0;  // writers; 0 = 2 x hardware threads (locktorture's nwriters_stress = -1)
  int readers = 0;
  double duration_s = 5.0;
  std::int64_t hold_ns = 0;               // busy-wait inside the critical section
  std::int64_t long_hold_ns = 1'000'000;  // occasional long hold (locktorture long_hold)
  std::uint32_t long_hold_one_in = 0;     // 0 = 2000 x threads acquisitions
  std::uint64_t seed = 1;
  double stuck_after_s = 30.0;  // watchdog: threads still running this long after stop
  // When set (Ctrl-C), the run stops early; the result covers the time it ran.
  const std::atomic<bool>* cancel = nullptr;
  LockPolicies policies{};
};

using torture::ThreadStats;
using torture::TortureResult;

// Runs the torture test of the named lock. Throws std::invalid_argument for an unknown
// lock name. If the watchdog fires, the worker threads are left detached and the caller
// must end the process after reporting.
TortureResult run_torture(const TortureOptions& options);

}  // namespace pvlock::native
