// SPDX-License-Identifier: GPL-2.0-only
// locktorture on real threads (kernel/locking/locktorture.c, in spirit): writer threads loop
// acquire -> check exclusion -> hold -> release, readers (for rw locks) check that no writer
// is beside them; per-thread acquisition counts expose starvation the way locktorture does
// ("???" when max/2 > min).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "pvlock/env/lock_events.hpp"
#include "pvlock/lock/policy.hpp"

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

struct ThreadStats {
  std::uint64_t acquisitions = 0;
  std::int64_t max_wait_ns = 0;
  bool reader = false;
};

struct TortureResult {
  std::string lock;
  int threads = 0;
  int readers = 0;
  double duration_s = 0;                // the time it ran: less than asked when interrupted
  bool interrupted = false;             // stopped early by TortureOptions::cancel
  std::uint64_t acquisitions = 0;       // writer (exclusive) acquisitions
  std::uint64_t read_acquisitions = 0;  // shared acquisitions
  std::uint64_t violations = 0;
  std::uint64_t min_per_thread = 0;  // over writers
  std::uint64_t max_per_thread = 0;
  bool starvation = false;  // locktorture's "???": max/2 > min among writers
  std::int64_t max_wait_ns = 0;
  bool stuck = false;    // watchdog fired: threads could not be stopped
  std::string liveness;  // simulator: the liveness watchdog's diagnostic when it fired
  std::vector<ThreadStats> per_thread;
  LockEventCounts counters{};
  bool success() const { return violations == 0 && !stuck; }
};

// Runs the torture test of the named lock. Throws std::invalid_argument for an unknown
// lock name. If the watchdog fires, the worker threads are left detached and the caller
// must end the process after reporting.
TortureResult run_torture(const TortureOptions& options);

}  // namespace pvlock::native
