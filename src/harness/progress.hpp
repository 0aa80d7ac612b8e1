// SPDX-License-Identifier: GPL-2.0-only
// Progress of one long simulation (`pvlock run`): how far simulated time has come, how long
// the rest will take at the speed so far, and a way to stop the run early. It rides on the
// simulation's sampler (sim/simulation.hpp): sampling reads the run without changing it, so
// a run with progress gives the same result as one without.
//
// On a terminal one line on `out` is rewritten in place (simulated time done, elapsed wall
// time, ETA). Elsewhere (a log, a pipe) there is no updating line; a run that will take
// longer than kLongRunS says once how long. Either way, when a trace is being recorded and
// its file would grow past kTraceWarnBytes at the rate seen so far, that is said once, before
// anything is written.
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "sim/engine/time.hpp"

namespace pvlock::sim {
class Simulation;
class Sampler;
namespace trace {
class Tracer;
}
}  // namespace pvlock::sim

namespace pvlock::harness {

inline constexpr double kLongRunS = 10.0;
inline constexpr double kTraceWarnBytes = 1e9;
// Bytes a trace event takes in the written file (measured on the example scenarios: 85).
inline constexpr double kTraceBytesPerEvent = 85.0;

struct ProgressOptions {
  std::FILE* out = nullptr;  // null: neither progress nor estimates
  bool tty = false;          // an updating line, else one line for a long run
  // When set (e.g. by a SIGINT handler), the run stops at its next sample by throwing
  // Interrupted; the caller still has its tracer, which holds everything up to `at`.
  const std::atomic<bool>* cancel = nullptr;
  const sim::trace::Tracer* tracer = nullptr;  // its projected size is checked
};

// Thrown out of the simulation when ProgressOptions::cancel became true.
struct Interrupted : std::runtime_error {
  Interrupted(sim::Time at_, sim::Time end_)
      : std::runtime_error("interrupted"), at(at_), end(end_) {}
  sim::Time at;   // simulated time reached
  sim::Time end;  // simulated time the run would have ended at
};

// The sampling interval progress needs when nothing else samples the run: often enough in
// simulated time that even a slow run is looked at several times a second of wall time.
sim::Time progress_interval(sim::Time run_end);

// A sampler that reports progress and forwards every sample to `inner` (may be null, e.g.
// the run's time series, which then sets the interval).
std::unique_ptr<sim::Sampler> make_progress_sampler(const sim::Simulation& sim,
                                                    const ProgressOptions& o, sim::Sampler* inner);

// "42 s", "3 min 20 s", "2 h 05 min".
std::string format_wall_duration(double seconds);

}  // namespace pvlock::harness
