// SPDX-License-Identifier: GPL-2.0-only
// lockloop: every task loops compute(c) -> lock -> hold(h) -> unlock on one lock of the
// VM's configured type (a spinlock is taken with preemption off, and with IRQs off too
// when irqs_off = true, as spin_lock_irq does). Score: lock/unlock pairs per second in the
// VM, over the measured window.
//
// [workload] type = "lockloop", tasks_per_vcpu = 1, compute_ns = <dist>, hold_ns = <dist>,
//            irqs_off = false
#pragma once

#include <memory>

#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

std::unique_ptr<Workload> make_lockloop(const scenario::WorkloadSpec& spec, sim::Guest& guest);

}  // namespace pvlock::workload
