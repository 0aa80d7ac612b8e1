// SPDX-License-Identifier: GPL-2.0-only
// What a guest kernel asks of the machine it runs on: the seam between guest and host.
//
// The guest calls the platform to halt a vCPU (HLT in the idle loop or in pv_wait), to kick
// another vCPU (KVM_HC_KICK_CPU), and to send an IPI; the platform decides when the target
// notices (Guest::kick_arrived / Guest::deliver_irq) and, under a hypervisor, when a vCPU is
// on a physical CPU at all (Simulation::vcpu_stop / vcpu_start) and which physical CPU the
// cache model should charge (Vcpu::pcpu). Bare metal (bare_metal.hpp) does all of this at
// once; the hypervisor layer replaces it with exits, host scheduling and wake-up latencies.
#pragma once

#include "sim/engine/event_queue.hpp"
#include "sim/host_counters.hpp"

namespace pvlock::sim {

class Simulation;
class Guest;
struct Vcpu;

class Platform {
 public:
  virtual ~Platform() = default;
  // Called once the guests exist, before the run starts.
  virtual void attach(Simulation& sim) = 0;
  // KVM_FEATURE_PV_UNHALT offered: the guest's "auto" lock becomes pvqspinlock.
  virtual bool pv_unhalt(const Guest& guest) const = 0;
  // The vCPU executes HLT (idle loop or pv_wait); it stays halted until the guest is told
  // of a kick or an interrupt. A kick that arrived before (Vcpu::pv_unhalted) makes the HLT
  // return at once: the platform clears the flag and Vcpu::halted. Returns the cost (ns)
  // charged to the halting vCPU.
  virtual double halt(Vcpu& v) = 0;
  // pv_kick(from -> to). Returns the cost (ns) charged to the kicking vCPU.
  virtual double kick(Vcpu& from, Vcpu& to) = 0;
  // A reschedule IPI (from -> to) whose handler costs `handler_ns` on the target. Returns
  // the cost charged to the sender.
  virtual double send_ipi(Vcpu& from, Vcpu& to, double handler_ns) = 0;
  // KVM_HC_SCHED_YIELD (from -> to): the guest asks the host to run vCPU `to`, which it saw
  // preempted, in its place (kvm_sched_yield()). Returns the cost charged to the caller.
  // Bare metal never shows a preempted CPU, so the guest never asks it.
  virtual double sched_yield(Vcpu& /*from*/, Vcpu& /*to*/) { return 0; }
  // Events of kind EventKind::host (and timer). Returns false for a stale one (a timer
  // superseded by a later one of its kind), which did nothing.
  virtual bool on_event(const Event& e) = 0;
  // The name of a host event's sub-kind (Event::arg), for the run's event counts.
  virtual const char* event_name(std::uint8_t /*arg*/) const { return "host"; }
  // The vCPU enters / leaves a PAUSE loop (a guest spin_until): pause-loop exiting watches
  // these. Bare metal ignores them.
  virtual void spin_begin(Vcpu&) {}
  virtual void spin_end(Vcpu&) {}
  // Start of the measured window: host counters restart.
  virtual void measure_start() {}
  // The local APIC timer fired for a halted vCPU (Guest::tick). If the guest left HLT (IRQs
  // on) a blocked vCPU thread must be woken; if it could not (IRQs off), KVM still kicks the
  // thread (kvm_set_pending_timer), which re-checks and blocks again. Bare metal: nothing.
  virtual void halt_ended(Vcpu&) {}
  // Fault injection (adversarial host): take the vCPU off its physical CPU now, leaving it
  // runnable. With ns == 0 a sched_yield() of its thread (the host runs something else if it
  // has anything); with ns > 0 a host thread takes that pCPU for ns of CPU time first (an
  // interrupt storm, a kworker, a QEMU I/O thread), whatever else is runnable. Bare metal has
  // no host to do so.
  virtual void deschedule(Vcpu&, std::int64_t /*ns*/) {}
  // The vCPU's steal time since the run began (kvm_steal_time's `steal`): wall time it spent
  // runnable but off its physical CPU, a wait in progress included. Bare metal has none.
  virtual std::int64_t steal_ns(const Vcpu&, std::int64_t /*now*/) const { return 0; }
  // The host's counters over the measured window, for the whole machine and for guest
  // `guest` (its index), and that guest's steal time at `now`, waits in progress included.
  // A platform without a host (bare metal) has no counters: nullptr, and no steal.
  virtual const HostCounters* host_counters() const { return nullptr; }
  virtual const HostCounters* guest_host_counters(int /*guest*/) const { return nullptr; }
  virtual std::int64_t guest_steal_ns(int /*guest*/, std::int64_t /*now*/) const { return 0; }
};

}  // namespace pvlock::sim
