// SPDX-License-Identifier: GPL-2.0-only
// What a workload program may do, for the task whose fiber is running: compute (local work
// in running time), disable/enable interrupts, draw random durations, and ask whether the
// measured window has started. Locks are used directly (pvlock::with_lock<SimEnv>), and
// block/wake through SimEnv, exactly as kernel code would.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "scenario/scenario.hpp"
#include "sim/context.hpp"
#include "sim/guest/guest.hpp"
#include "sim/simulation.hpp"

namespace pvlock::workload::api {

inline sim::Task& self() { return *sim::tl_ctx.task; }
inline sim::Guest& guest() { return *self().guest; }

inline void compute(std::int64_t ns) {
  if (ns > 0) guest().compute(self(), ns);
}
inline void irq_disable() { guest().irq_disable(self()); }
inline void irq_enable() { guest().irq_enable(self()); }
// Enter the kernel (a system call, fault, fork or exit) and return to user mode: the
// guest's preempt = "none" defers the tick's reschedule to the return.
inline void kernel_enter() { guest().kernel_enter(self()); }
inline void kernel_exit() { guest().kernel_exit(self()); }
inline bool measuring() { return guest().sim().measuring(); }
inline std::int64_t now() { return guest().sim().now(); }
// An IPI to vCPU `cpu` of this guest (a handler of handler_ns runs there when it can take
// interrupts); `ack` is decremented once the handler has run. False: the call was queued
// behind earlier ones the target has not run yet, and no IPI was needed.
inline bool send_ipi(int cpu, double handler_ns, sim::SimAtomic<std::uint32_t>* ack) {
  return guest().send_ipi(self(), cpu, handler_ns, ack);
}
// The call-function IPIs to the vCPUs flagged in `targets` are sent (smp_ops hook).
inline void call_function_ipis_sent(const std::vector<std::uint8_t>& targets) {
  guest().call_function_ipis_sent(self(), targets);
}
// What an IPI to vCPU `cpu` finds there, for diagnostics (ebizzy's shootdown census):
// halted in pv_wait (IRQs off: it handles the IPI only after its lock hand-off), halted idle,
// descheduled by the host, running with IRQs off, or running and able to take it at once.
enum class IpiTarget { halted_in_pv_wait, halted_idle, preempted, irqs_off, can_take };
inline constexpr int kIpiTargets = 5;
// Their keys in the run JSON (vms[].shootdowns.targets), in enum order.
inline constexpr const char* kIpiTargetNames[kIpiTargets] = {"halted_in_pv_wait", "halted_idle",
                                                             "preempted", "irqs_off", "can_take"};
inline IpiTarget ipi_target(int cpu) {
  const sim::Vcpu& v = guest().vcpu(cpu);
  if (v.halted) return v.halt_for_pv ? IpiTarget::halted_in_pv_wait : IpiTarget::halted_idle;
  if (!v.running) return IpiTarget::preempted;
  if (v.curr != nullptr && v.curr->irqs_off) return IpiTarget::irqs_off;
  return IpiTarget::can_take;
}
// The steal-time "preempted" byte of another vCPU, read as the guest reads it (a simulated
// load: what PV TLB flush does in kvm_flush_tlb_multi).
inline bool vcpu_preempted(int cpu) { return guest().vcpu(cpu).steal.preempted.load() != 0; }
// Attribute the following instructions to a profile symbol.
inline void set_symbol(sim::Sym s) { self().sym = s; }

// One draw from a duration distribution (ns), with the task's own generator.
inline std::int64_t sample(const scenario::Dist& d) {
  sim::Rng& r = self().rng;
  double x = d.mean;
  switch (d.kind) {
    case scenario::Dist::Kind::constant:
      break;
    case scenario::Dist::Kind::uniform:
      x = d.min + (d.max - d.min) * r.uniform();
      break;
    case scenario::Dist::Kind::normal: {
      // Box-Muller: one normal deviate from two uniforms.
      const double u1 = std::max(r.uniform(), 1e-300);
      const double u2 = r.uniform();
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      x = d.mean * (1.0 + d.cv * z);
      break;
    }
    case scenario::Dist::Kind::exponential:
      x = -d.mean * std::log(std::max(1.0 - r.uniform(), 1e-300));
      break;
  }
  return sim::round_ns(std::max(0.0, x));
}

}  // namespace pvlock::workload::api
