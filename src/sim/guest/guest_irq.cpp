// SPDX-License-Identifier: GPL-2.0-only
// Guest, what arrives from outside a vCPU's current task: interrupts (IPIs and their
// handlers), the scheduler tick and PV kicks.
#include <algorithm>
#include <cmath>

#include "sim/guest/guest.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

void Guest::deliver_irq(Vcpu& v, double handler_ns) {
  v.irq_pending_ns += handler_ns;
  Task* c = v.curr;
  if (c == nullptr) {
    if (!v.halted) return;
    // The idle loop wakes, runs the handler, and looks at its run queue.
    v.halted = false;
    v.tick_pending = false;
    add_interval(Sym::idle, v.idle_since);
    const double h = v.irq_pending_ns;
    v.irq_pending_ns = 0;
    profile_.add(Sym::irq, h);
    // The handlers complete only once the vCPU really runs (dispatch, below).
    if (v.running) run_irq_acks(v);
    sim_.schedule_resume(v, sim_.now() + round_ns(h));
    return;
  }
  if (c->irqs_off) {
    v.irq_waiting = true;
    return;
  }
  // With IRQs on, an interrupt also ends a halt in pv_wait (a spurious wake-up for the lock).
  if (v.halted) {
    v.halted = false;
    if (v.halt_for_pv) sim_.watchdog().trace().add(sim_.now(), TraceKind::pv_wake_irq, v.index);
  }
  if (v.running) sim_.schedule_resume(v, sim_.now());
}

void Guest::kick_arrived(Vcpu& v) {
  // KVM_HC_KICK_CPU sets pv_unhalted, which makes a halted vCPU runnable whatever its IRQ
  // flag (kvm_arch_vcpu_runnable): an HLT in progress ends and vcpu_block() clears the flag
  // again. A vCPU not in HLT keeps it, and its next HLT returns at once (Platform::halt).
  if (!v.halted) {
    v.pv_unhalted = true;
    return;
  }
  v.halted = false;
  if (v.halt_for_pv) {
    sim_.watchdog().trace().add(sim_.now(), TraceKind::pv_wake_kick, v.index);
  } else {
    // The idle loop's HLT: the idle loop finds nothing to run and halts again.
    add_interval(Sym::idle, v.idle_since);
  }
  if (v.running) sim_.schedule_resume(v, sim_.now());
}

void Guest::tick(Vcpu& v) {
  // A tick whose interrupt the vCPU has not taken yet (IRQs off since it fired) programmed
  // no next deadline: nothing fires, and a vCPU halted with IRQs off is woken by the timer
  // at most once per halt (apic_timer_expired() -> kvm_vcpu_kick(), then the interrupt
  // stays pending until the guest enables IRQs).
  if (v.curr != nullptr && !v.tick_pending) {
    bool interrupt = v.halted && v.halt_for_pv;
    if (slice_over(v)) {
      set_need_resched(v);
      interrupt = true;
    }
    if (v.curr->irqs_off) v.tick_pending = true;
    if (interrupt) {
      deliver_irq(v, 0);
      // The tick is the local APIC timer: it wakes a vCPU halted with IRQs on even when the
      // host has blocked its thread (how a waiter whose kick was lost still wakes).
      sim_.platform().halt_ended(v);
    }
  }
  sim_.queue().push(sim_.now() + spec_.tick_ns, EventKind::vcpu_tick,
                    static_cast<std::uint32_t>(v.index), 0);
}

}  // namespace pvlock::sim
