// SPDX-License-Identifier: GPL-2.0-only
// KvmPlatform, pause-loop exiting: the PLE window over a guest spin, the exit
// (handle_pause) and kvm_vcpu_on_spin()'s directed yield (candidate rules in
// directed_yield.hpp).
#include <algorithm>

#include "sim/guest/guest.hpp"
#include "sim/host/directed_yield.hpp"
#include "sim/host/kvm_platform.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

void KvmPlatform::spin_begin(Vcpu& v) {
  VcpuState& s = st(v);
  s.spinning = true;
  if (sc_.host->kvm.ple && v.running && !s.pending_wake) schedule_ple(v);
}

void KvmPlatform::spin_end(Vcpu& v) {
  VcpuState& s = st(v);
  s.spinning = false;
  s.spin_loop.spin_ended();
}

void KvmPlatform::schedule_ple(Vcpu& v) {
  const auto& kvm = sc_.host->kvm;
  const double window_ns = static_cast<double>(st(v).ple_window) / kvm.cycles_per_ns;
  arm_timer(v, sim_->now() + std::max<Time>(1, nonneg_ns(window_ns)), kPle);
}

host::YieldResult KvmPlatform::directed_yield(Vcpu& from, Vcpu& to, std::uint64_t& tried,
                                              std::uint64_t& done, bool target_switching_in) {
  ++tried;
  const host::ThreadId f = st(from).thread;
  const host::ThreadId t = st(to).thread;
  // yield_to() gives up with -ESRCH when both run queues hold a single task.
  if (sched_->nr_running(sched_->pcpu_of(f)) == 1 && sched_->nr_running(sched_->pcpu_of(t)) == 1)
    return host::YieldResult::single_tasks;
  if (target_switching_in) {
    // The target is already its pCPU's pick (the next-buddy mark would change nothing
    // there); what remains of yield_to_task_fair() is the yielder's yield_task_fair() and
    // schedule() -- unless the yielder has itself just been preempted by the wake-up.
    if (!sched_->running(f)) return host::YieldResult::failed;
    sched_->yield(f, sim_->now());
  } else if (!sched_->yield_to(f, t, sim_->now())) {
    return host::YieldResult::failed;
  }
  ++done;
  if (trace::Tracer* tr = sim_->tracer())
    tr->instant(from, "yield_to", sim_->now(), &to,
                &tried == &counters_.kick_yields_tried    ? "kick_boost"
                : &tried == &counters_.sched_yields_tried ? "sched_yield"
                                                          : "kvm_vcpu_on_spin");
  return host::YieldResult::yielded;
}

void KvmPlatform::kvm_vcpu_on_spin(Vcpu& me) {
  Guest& g = *me.guest;
  int& last = last_boosted_[static_cast<std::size_t>(g.index())];
  // The kernel marks us in_spin_loop only while this handler runs; host.kvm.in_spin_loop_until
  // says whether the model does, or keeps the mark for the rest of the spin.
  const bool handler_scope = handler_scoped_spin_mark();
  st(me).spin_loop.handler_started();
  const bool irq_user = sc_.host->kvm.irq_boost_user_mode;
  const int target = host::pick_directed_yield(
      g.vcpu_count(), me.id, last, true, sc_.host->kvm.in_kernel_check_preempted_only,
      [&](int i) { return next_dy_candidate(g.index(), i); },
      [&](int i) {
        const Vcpu& v = g.vcpu(i);
        const VcpuState& s = st(v);
        host::DyView d;
        d.ready = s.ready;
        d.runnable = sched_->runnable(s.thread);
        d.preempted = s.preempted;
        d.in_kernel = s.preempted_in_kernel;
        // A pending interrupt exempts a vCPU preempted in user mode only since 52acd22faa1a.
        d.irq_pending = irq_user && (v.irq_pending_ns > 0 || v.irq_waiting);
        return d;
      },
      [&](int i) { return st(g.vcpu(i)).spin_loop.looked_at(); },
      [&](int i) {
        ++gc(me).ple_yields_tried;
        return directed_yield(me, g.vcpu(i), counters_.ple_yields_tried, counters_.ple_yields);
      });
  if (target >= 0) {
    ++gc(me).ple_yields;
    last = target;
  }
  // Still on our pCPU: the handler returns now (one whose yield_to() took the pCPU returns at
  // the next schedule-in, kWake below).
  if (sched_->running(st(me).thread)) st(me).spin_loop.handler_returned(handler_scope);
}

// handle_pause(): a PAUSE loop outlasted its window. grow_ple_window(), then
// kvm_vcpu_on_spin(); without a yield the spin goes on after the exit's round trip.
void KvmPlatform::handle_pause(Vcpu& v) {
  VcpuState& s = st(v);
  const std::int64_t now = sim_->now();
  const auto& hs = *sc_.host;
  if (!s.spinning || !v.running) return;
  ++counters_.exits_ple;
  ++gc(v).exits_ple;
  if (trace::Tracer* tr = sim_->tracer()) tr->instant(v, "PLE exit", now);
  // grow_ple_window(): each exit doubles the window (up to the maximum).
  s.ple_window = std::min(s.ple_window * hs.kvm.ple_window_grow, hs.kvm.ple_window_max);
  kvm_vcpu_on_spin(v);
  if (sched_->running(s.thread) && v.running) {
    // No yield: the exit itself costs the vCPU a round trip, then the spin goes on.
    sim_->vcpu_stop(v);
    if (trace::Tracer* tr = sim_->tracer()) tr->vcpu_off_reason(v, trace::OffReason::ple_exit, now);
    s.pending_wake = true;
    s.exit_return = true;
    arm_timer(v, now + nonneg_ns(sc_.costs.vmexit_ns), kWake);
  }
}

}  // namespace pvlock::sim
