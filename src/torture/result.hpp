// SPDX-License-Identifier: GPL-2.0-only
// The verdict of a torture run, the same in both worlds: per-thread acquisition counts
// (locktorture's starvation check, "???" when max/2 > min among writers), exclusion
// violations, lost updates of the protected counter, and the liveness verdict.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pvlock/env/lock_events.hpp"

namespace pvlock::torture {

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
  bool interrupted = false;             // stopped early (Ctrl-C)
  std::uint64_t acquisitions = 0;       // writer (exclusive) acquisitions
  std::uint64_t read_acquisitions = 0;  // shared acquisitions
  std::uint64_t violations = 0;
  std::uint64_t min_per_thread = 0;  // over writers
  std::uint64_t max_per_thread = 0;
  bool starvation = false;  // locktorture's "???": max/2 > min among writers
  std::int64_t max_wait_ns = 0;
  bool stuck = false;    // watchdog fired: threads could not be stopped / nobody acquired
  std::string liveness;  // simulator: the liveness watchdog's diagnostic when it fired
  std::vector<ThreadStats> per_thread;
  LockEventCounts counters{};
  bool success() const { return violations == 0 && !stuck; }
};

// Fills the per-thread figures of `r` from `stats` and adds to r.violations the updates of
// the protected counter that were lost (its final value `counted` against the writers'
// acquisitions), when `count_lost` (a run whose threads all stopped).
inline void summarize(TortureResult& r, const std::vector<ThreadStats>& stats,
                      std::uint64_t counted, bool count_lost) {
  r.per_thread = stats;
  bool first = true;
  for (const ThreadStats& s : stats) {
    r.max_wait_ns = std::max(r.max_wait_ns, s.max_wait_ns);
    if (s.reader) {
      r.read_acquisitions += s.acquisitions;
      continue;
    }
    r.acquisitions += s.acquisitions;
    r.min_per_thread = first ? s.acquisitions : std::min(r.min_per_thread, s.acquisitions);
    r.max_per_thread = std::max(r.max_per_thread, s.acquisitions);
    first = false;
  }
  if (count_lost)
    r.violations += counted > r.acquisitions ? counted - r.acquisitions : r.acquisitions - counted;
  r.starvation = r.max_per_thread / 2 > r.min_per_thread;
}

}  // namespace pvlock::torture
