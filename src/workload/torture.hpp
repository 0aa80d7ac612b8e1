// SPDX-License-Identifier: GPL-2.0-only
// torture: the torture body of torture/body.hpp (the same one native/torture.cpp runs on real
// threads) as simulated guest tasks, one writer per tasks_per_vcpu on each vCPU plus the
// readers. Violations are counted, per-task acquisition min/max expose starvation, and a run in
// which nobody acquires the lock for a long stretch is "stuck" (a lost wake-up or deadlock).
//
// [workload] type = "torture", tasks_per_vcpu = 1, readers = 0, hold_ns = <dist>,
//            long_hold_ns = 1000000, long_hold_one_in = 0 (= 2000 x writers),
//            irqs_off = false (writers take the lock with IRQs off, as spin_lock_irq)
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "native/torture.hpp"
#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

std::unique_ptr<Workload> make_torture(const scenario::WorkloadSpec& spec, sim::Guest& guest);

// The verdict of a torture workload `w` made by make_torture(); nullopt for any other.
std::optional<native::TortureResult> torture_result(const Workload& w);

}  // namespace pvlock::workload
