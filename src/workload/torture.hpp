// torture: locktorture's checks inside the simulator (kernel/locking/locktorture.c in
// spirit, as native/torture.cpp does on real threads). Writers loop acquire -> check the
// owner slot and readers count -> read-modify-write a protected counter across the hold ->
// release, with an occasional long hold; readers (rw locks) check that no writer is beside
// them. Violations are counted, per-task acquisition min/max expose starvation, and a run in
// which nobody acquires the lock for a long stretch is "stuck" (a lost wake-up or deadlock).
//
// [workload] type = "torture", tasks_per_vcpu = 1, readers = 0, hold_ns = <dist>,
//            long_hold_ns = 1000000, long_hold_one_in = 0 (= 2000 x writers),
//            irqs_off = false (writers take the lock with IRQs off, as spin_lock_irq)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "native/torture.hpp"
#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

std::unique_ptr<Workload> make_torture(const scenario::WorkloadSpec& spec, sim::Guest& guest);

// `pvlock torture --world sim`: the torture workload on a bare-metal simulated machine with
// o.threads CPUs (one writer each, plus o.readers reader tasks) for o.duration_s simulated
// seconds; the result in the native harness's terms. `overrides` are scenario overrides as
// `pvlock run --set` takes them for a bare-metal scenario ("faults.drop_kick=0.01",
// "workload.irqs_off=true", "guest.spin_threshold=1"), applied to that scenario. Throws
// std::invalid_argument for an unknown lock and scenario::ScenarioError for a bad override.
native::TortureResult run_sim_torture(const native::TortureOptions& o,
                                      const std::vector<std::string>& overrides = {});

}  // namespace pvlock::workload
