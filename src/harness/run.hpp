// SPDX-License-Identifier: GPL-2.0-only
// The scenario runner: Scenario -> simulation -> result JSON. It sits above the workloads
// (it instantiates them) and the simulator (it builds the machine and its platform). Thread-safe in
// the sense that several runs may proceed at once in different threads (each is single-threaded and
// keeps its state in thread_local context).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace pvlock::sim {
class Simulation;
class Guest;
namespace trace {
class Tracer;
}
}  // namespace pvlock::sim

namespace pvlock::harness {

struct ProgressOptions;

struct VmRun {
  std::string name;
  sim::Guest* guest = nullptr;
  std::unique_ptr<workload::Workload> workload;
};

// The spinlock a guest uses: its lock_name, with "auto" resolved as the kernel does
// (pvqspinlock when the host offers PV unhalt and nopvspin is not given, else qspinlock).
std::string resolve_lock_name(const scenario::GuestSpec& g, bool host_pv_unhalt);

// The guest's raw_spinlock_t, the wait_lock of its mutexes and rwsems.
struct WaitLock {
  RawSpinlockKind kind = RawSpinlockKind::automatic;
  std::string name;   // RawSpinlockKind::external: the kernel:* spinlock
  bool boot = false;  // the kernel's choice at boot, not a lock the guest names
};

// The guest's wait_lock given its resolved lock: its wait_lock knob if set; else that lock
// when it is a spinlock -- one of pvlock's or the kernel's own code (kernel:qspinlock,
// kernel:<variant>/pvqspinlock, ...), in this guest's kernel instance; else the kernel's
// choice at boot (kvm_spinlock_init: pvqspinlock with PV unhalt, else qspinlock, which
// virt_spin_lock turns into test-and-set under a host without PV unhalt).
WaitLock resolve_wait_lock(const scenario::GuestSpec& g, const std::string& lock_name,
                           bool host_pv_unhalt);

// Builds and runs the simulation of `sc`; `inspect` sees it after the run, before teardown.
// Returns the wall-clock seconds the run took. Throws scenario::ScenarioError for invalid
// workload parameters and std::invalid_argument for an unknown lock or unsupported setup.
// A non-null `tracer` records the run's timeline (sim/trace/tracer.hpp). `prepare`, if
// given, sees the simulation once every guest and workload exists, before it runs. A run
// stopped by a progress sampler (harness/progress.hpp) is inspected as it stands, its trace
// closed at that time, and Interrupted is rethrown.
double run_scenario(const scenario::Scenario& sc,
                    const std::function<void(sim::Simulation&, std::vector<VmRun>&)>& inspect,
                    sim::trace::Tracer* tracer = nullptr,
                    const std::function<void(sim::Simulation&, std::vector<VmRun>&)>& prepare = {});

// {"scenario", "seed", "simulated_ns", "vms": [...], "counters", "profile", "lockstat",
// "host", "perf"}; every field except "perf" is a deterministic function of the scenario and
// its seed. "lockstat" maps each VM to its lock instances' /proc/lock_stat rows.
// `series_interval_ns` > 0 adds "series" (harness/series.hpp), sampled at that interval of
// simulated time from time 0; the other fields are the same as without it. A non-null
// `progress` reports the run's progress and may stop it (harness/progress.hpp: Interrupted);
// the result is the same as without it.
nlohmann::ordered_json run_to_json(const scenario::Scenario& sc,
                                   sim::trace::Tracer* tracer = nullptr,
                                   std::int64_t series_interval_ns = 0,
                                   const ProgressOptions* progress = nullptr);

}  // namespace pvlock::harness
