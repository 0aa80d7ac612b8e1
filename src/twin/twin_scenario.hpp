// SPDX-License-Identifier: GPL-2.0-only
// The simulated twin of one native `pvlock bench` cell: N threads looping on one lock on this
// machine, as a scenario built from the calibration.
//
// A native thread running pvlock's lock code is what a vCPU running a guest kernel's lock
// code is to KVM, not what a guest task is to its kernel: NativeEnv's preempt_disable() is a
// no-op (a userspace thread is preempted anywhere, holding the lock or queued for it) and its
// per-CPU data is per thread. So the twin is one single-task "VM" per cell whose vCPUs are the
// threads, floating on the calibrated machine's CPUs under the host scheduler model of the
// running kernel (EEVDF from 6.6 on, else CFS) -- the machine's own OS -- with every KVM
// feature a thread lacks turned off: no PAUSE-loop exits, no halt polling, no steal-time
// "preempted" flag (vcpu_is_preempted() is false natively), no directed yields. pv_wait and
// pv_kick, which natively are FUTEX_WAIT and FUTEX_WAKE, cost the measured futex system calls;
// a halted vCPU's wake-up costs the measured futex wake-to-run latency.
#pragma once

#include <string>
#include <vector>

#include "calibrate/calibration.hpp"
#include "scenario/scenario.hpp"
#include "twin/twin_locks.hpp"

namespace pvlock::twin {

struct TwinWorkload {
  std::int64_t cs_ns = 200;       // busy-wait inside the critical section
  std::int64_t outside_ns = 500;  // busy-wait between unlock and the next lock
};

struct SimSettings {
  double duration_ms = 200;
  double warmup_ms = 20;
  std::uint64_t seed = 1;
  bool steal_as_noise = false;  // the calibration's steal as host housekeeping
  // Other processes' runnable threads seen before the native cell, as that many CPU-bound
  // host threads (stress_threads) competing with the cell's threads; 0 = none.
  int background_threads = 0;
};

// The scenario's TOML text (the calibration's fragment plus run, host.kvm and vm tables) and
// the --set overrides that map the native mechanisms onto KVM's costs.
struct TwinScenarioText {
  std::string toml;
  std::vector<std::string> overrides;
};

TwinScenarioText twin_scenario_text(const calibrate::Calibration& cal, const TwinLock& lock,
                                    int threads, const TwinWorkload& w, const SimSettings& s);

// Parsed and validated (throws scenario::ScenarioError if the calibration is unusable).
scenario::Scenario twin_scenario(const calibrate::Calibration& cal, const TwinLock& lock,
                                 int threads, const TwinWorkload& w, const SimSettings& s);

}  // namespace pvlock::twin
