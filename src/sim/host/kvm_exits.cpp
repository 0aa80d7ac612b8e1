// SPDX-License-Identifier: GPL-2.0-only
// KvmPlatform, the guest's exits into the hypervisor: HLT and adaptive halt polling, the
// wake-up of a halted vCPU (kvm_vcpu_kick), KVM_HC_KICK_CPU with seed 001's kick-time
// yield, KVM_HC_SCHED_YIELD, IPIs (posted interrupts) and host-side deschedules.
#include <algorithm>

#include "sim/guest/guest.hpp"
#include "sim/host/kvm_platform.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

double KvmPlatform::halt(Vcpu& v) {
  VcpuState& s = st(v);
  const std::int64_t now = sim_->now();
  ++counters_.exits_hlt;
  ++gc(v).exits_hlt;
  if (v.pv_unhalted) {
    // A kick already delivered: vcpu_block() finds the vCPU runnable
    // (kvm_arch_vcpu_runnable) before kvm_vcpu_halt(), so no halt polling, no block and no
    // poll-window adaptation; it clears pv_unhalted and re-enters the guest, which pays the
    // exit and entry and goes on after its HLT.
    v.pv_unhalted = false;
    v.halted = false;
    return sc_.costs.hlt_exit_ns;
  }
  s.halt_start = now;
  const auto& kvm = sc_.host->kvm;
  if (kvm.halt_poll_ns > 0 && s.poll_ns > 0 && sched_->single_task_running(v.pcpu)) {
    s.halt = HaltState::polling;
    sched_->set_polling(s.thread, true);
    arm_timer(v, now + s.poll_ns, kPollEnd);
  } else {
    s.halt = HaltState::blocked;
    ++counters_.halt_blocks;
    ++gc(v).halt_blocks;
    // Hosts before 54aa83c90198 wrote the preempted byte on every vcpu_put, so a halted
    // vCPU looked preempted to the guest.
    if (kvm.preempted_on_every_put) v.steal.preempted.hw_store(1);
    sched_->block(s.thread, now);
  }
  return sc_.costs.hlt_exit_ns;
}

void KvmPlatform::end_halt(Vcpu& v, std::int64_t now) {
  VcpuState& s = st(v);
  if (s.halt == HaltState::polling) {
    // The poll loop saw the event on its own pCPU: block_ns ends here.
    sched_->set_polling(s.thread, false);
    adapt_halt_poll(s, now - s.halt_start);
  } else {
    // A blocked thread takes block_ns when schedule() returns to it: the time until its
    // switch-in (idle exit, run-queue wait) counts too.
    s.poll_adapt_at_entry = true;
  }
  s.halt = HaltState::none;
}

void KvmPlatform::adapt_halt_poll(VcpuState& s, std::int64_t block_ns) {
  const auto& kvm = sc_.host->kvm;
  // Adaptive halt polling (kvm_vcpu_block): shrink after a long halt, grow after a short one
  // that polling would have caught with a longer window. (Its shrink after an invalid
  // wake-up is s390's: on x86 vcpu_valid_wakeup() is always true.)
  auto shrink = [&] {
    s.poll_ns = kvm.halt_poll_ns_shrink == 0 ? 0 : s.poll_ns / kvm.halt_poll_ns_shrink;
  };
  if (kvm.halt_poll_ns > 0) {
    if (block_ns <= s.poll_ns) {
      // the poll caught it: keep the window
    } else if (s.poll_ns > 0 && block_ns > kvm.halt_poll_ns) {
      shrink();
    } else if (s.poll_ns < kvm.halt_poll_ns && block_ns < kvm.halt_poll_ns) {
      std::int64_t grown = s.poll_ns * kvm.halt_poll_ns_grow;
      if (grown < kvm.halt_poll_ns_grow_start) grown = kvm.halt_poll_ns_grow_start;
      s.poll_ns = std::min(grown, kvm.halt_poll_ns);
    }
  }
}

// After the guest was told of an event: if it left HLT, bring the vCPU back to run.
static bool unhalted(const Vcpu& v) { return !v.halted; }

void KvmPlatform::leave_halt_if_woken(Vcpu& to) {
  if (!unhalted(to)) return;  // e.g. an interrupt with IRQs off: still halted
  VcpuState& t = st(to);
  const std::int64_t now = sim_->now();
  if (t.halt == HaltState::polling) {
    // The poll loop sees the event: no host schedule, only the re-entry.
    end_halt(to, now);
    ++counters_.halt_polls_ok;
    sim_->vcpu_stop(to);
    t.pending_wake = true;
    t.exit_return = true;  // it never left its pCPU: no schedule-in
    arm_timer(to, now + nonneg_ns(sc_.costs.host_wake_polling_ns), kWake);
  } else if (t.halt == HaltState::blocked || t.halt == HaltState::checking) {
    // (checking: the thread is already runnable; wake_vcpu() only accounts the wake-up.)
    end_halt(to, now);
    wake_vcpu(to);
  }
}

double KvmPlatform::kick(Vcpu& from, Vcpu& to) {
  ++counters_.exits_kick;
  ++counters_.kicks;
  ++gc(from).exits_kick;
  ++gc(from).kicks;
  // kvm_pv_kick_cpu_op(): pv_unhalted + KVM_REQ_EVENT + kvm_vcpu_kick().
  const host::ThreadId target = st(to).thread;
  const bool was_blocked = !sched_->runnable(target);
  bool yielded = false;
  to.guest->kick_arrived(to);
  leave_halt_if_woken(to);
  // Where the kick left the target, before any kick-time yield moves it.
  const KickPath path = sched_->running(target) ? KickPath::on_cpu
                        : was_blocked           ? KickPath::queued
                                                : KickPath::runnable;
  // Seed 001 (266e85a5ec9): kvm_sched_yield() to the kicked queue head if it is ready to
  // run; since a1fa4cbd53d0 (2021) only if our pCPU has something else to run.
  const auto& kvm = sc_.host->kvm;
  if (kvm.kick_boost && &to != &from && st(to).ready &&
      !(kvm.yield_bailout_undercommit && sched_->single_task_running(from.pcpu))) {
    // The kick has just woken the halted thread. If its pCPU is on another socket, TTWU_QUEUE
    // left the wake-up on that CPU's wake list: the thread is TASK_WAKING and not on a run
    // queue yet, and yield_to() gives up ("p->state" is not TASK_RUNNING).
    auto count = [&](std::uint64_t HostCounters::*outcome) {
      ++(counters_.*outcome);
      ++(gc(from).*outcome);
    };
    ++gc(from).kick_yields_tried;
    const int target_pcpu = sched_->pcpu_of(target);
    const bool just_woken = was_blocked && sched_->runnable(target);
    if (sc_.host->ttwu_queue && just_woken && !sched_->shares_cache(from.pcpu, target_pcpu)) {
      ++counters_.kick_yields_tried;
      count(&HostCounters::kick_yields_lost_ttwu);
    } else {
      // A thread the kick has just switched in (onto an idle pCPU, or preempting) is not on
      // that CPU yet: p->on_cpu is set by the remote context switch, after the idle exit or
      // the reschedule IPI, microseconds after this hypercall's yield_to() looks. So
      // yield_to() does not see a running task and goes ahead.
      const bool switching_in = just_woken && sched_->running(target);
      switch (directed_yield(from, to, counters_.kick_yields_tried, counters_.kick_yields,
                             switching_in)) {
        case host::YieldResult::yielded:
          yielded = true;
          ++gc(from).kick_yields;
          if (target_pcpu == from.pcpu) count(&HostCounters::kick_yields_onto_kicker_pcpu);
          if (switching_in) count(&HostCounters::kick_yields_to_switching_in);
          // pick_next_entity() runs a next buddy only within the wakeup granularity of the
          // leftmost thread: a head too far ahead in vruntime keeps waiting, marked.
          if (!sched_->running(target)) count(&HostCounters::kick_yields_target_waiting);
          // yield_to()'s schedule() on the kicker's pCPU, with the kicker the skip buddy.
          if (!sched_->running(st(from).thread))
            count(&HostCounters::kick_yields_kicker_descheduled);
          break;
        case host::YieldResult::single_tasks:
          count(&HostCounters::kick_yields_single);
          break;
        case host::YieldResult::failed:
          count(&HostCounters::kick_yields_refused);
          break;
      }
    }
  }
  if (!to.running) {
    VcpuState& t = st(to);
    t.kicked_at = sim_->now();
    t.kick_path = !yielded || path == KickPath::on_cpu ? path
                  : path == KickPath::queued           ? KickPath::queued_yielded
                                                       : KickPath::runnable_yielded;
  }
  return sc_.costs.hypercall_ns + sc_.costs.kick_send_ns;
}

double KvmPlatform::sched_yield(Vcpu& from, Vcpu& to) {
  ++counters_.exits_sched_yield;
  ++gc(from).exits_sched_yield;
  // kvm_sched_yield(), the helper the kick-time yield shares: yield_to() the target. The
  // seed 001 patch (266e85a5ec9) added the "ready" test to the helper, so it applies here
  // too once the host has the kick boost; a1fa4cbd53d0 (2021) the under-commit bail-out.
  const auto& kvm = sc_.host->kvm;
  if (&to != &from && (!kvm.kick_boost || st(to).ready) &&
      !(kvm.yield_bailout_undercommit && sched_->single_task_running(from.pcpu))) {
    ++gc(from).sched_yields_tried;
    if (directed_yield(from, to, counters_.sched_yields_tried, counters_.sched_yields) ==
        host::YieldResult::yielded)
      ++gc(from).sched_yields;
  }
  return sc_.costs.hypercall_ns;
}

void KvmPlatform::entered_after_kick(Vcpu& v, std::int64_t now) {
  VcpuState& s = st(v);
  if (s.kicked_at < 0) return;
  const std::int64_t ns = now - s.kicked_at;
  s.kicked_at = -1;
  if (!sim_->measuring()) return;
  for (HostCounters* c : {&counters_, &gc(v)}) {
    HostCounters::KickEntry& e = c->kick_entry[static_cast<int>(s.kick_path)];
    ++e.n;
    e.ns += ns;
    if (ns >= 1'000'000) ++e.over_1ms;
  }
}

double KvmPlatform::send_ipi(Vcpu& from, Vcpu& to, double handler_ns) {
  ++counters_.exits_ipi;
  ++gc(from).exits_ipi;
  to.guest->deliver_irq(to, handler_ns);
  VcpuState& t = st(to);
  // d73eb57b80b: a vCPU receiving an interrupt is a good directed-yield target.
  if (sc_.host->kvm.irq_boost && !sched_->running(t.thread)) {
    t.ready = true;
    update_dy(to);
  }
  leave_halt_if_woken(to);
  // vmx_deliver_posted_interrupt(): outside guest mode the vector waits in the descriptor
  // and kvm_vcpu_kick() wakes a blocked thread -- with APICv only for the interrupt that
  // sets ON. A vCPU still halted here has IRQs off: kvm_vcpu_check_block() will say "not
  // runnable" (the interrupt is not allowed), so the wake-up only costs the host a switch.
  if (!to.running || to.halted) {
    const bool kicks = !sc_.host->kvm.apicv || !t.pi_on;
    t.pi_on = true;
    if (kicks && to.halted && t.halt == HaltState::blocked) masked_wake(to);
  }
  return sc_.costs.ipi_send_ns;
}

void KvmPlatform::halt_ended(Vcpu& v) {
  leave_halt_if_woken(v);
  // apic_timer_expired() -> kvm_set_pending_timer() kicks the vCPU whether or not the halted
  // guest can take the interrupt; the pending timer is injected and the check fails again.
  if (v.halted && st(v).halt == HaltState::blocked) masked_wake(v);
}

void KvmPlatform::masked_wake(Vcpu& v) {
  VcpuState& s = st(v);
  s.halt = HaltState::checking;
  ++counters_.halt_masked_wakes;
  ++gc(v).halt_masked_wakes;
  // kvm_vcpu_wake_up() marks the vCPU ready under the interrupt-delivery boost.
  if (sc_.host->kvm.irq_boost) {
    s.ready = true;
    update_dy(v);
  }
  if (trace::Tracer* tr = sim_->tracer()) tr->instant(v, "masked-IRQ wake", sim_->now());
  sched_->wake(s.thread, sim_->now());
}

void KvmPlatform::deschedule(Vcpu& v, std::int64_t ns) {
  if (ns > 0) {
    hog_preempt(v, ns);
    return;
  }
  // A sched_yield() of the vCPU thread: the host runs something else if it has anything.
  const VcpuState& s = st(v);
  if (sched_->running(s.thread)) sched_->yield(s.thread, sim_->now());
}

}  // namespace pvlock::sim
