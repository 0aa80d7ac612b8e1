#include "sim/host/kvm_platform.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/rng.hpp"
#include "sim/guest/guest.hpp"
#include "sim/host/directed_yield.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

namespace {
// A cost or delay in whole nanoseconds, never negative.
Time nonneg_ns(double ns) { return round_ns(std::max(0.0, ns)); }
}  // namespace

KvmPlatform::KvmPlatform(const scenario::Scenario& sc) : sc_(sc) {}
KvmPlatform::~KvmPlatform() = default;

KvmPlatform::VcpuState& KvmPlatform::st(const Vcpu& v) {
  return state_[static_cast<std::size_t>(v.index)];
}

HostCounters& KvmPlatform::gc(const Vcpu& v) {
  return per_guest_[static_cast<std::size_t>(v.guest->index())];
}

Vcpu* KvmPlatform::vcpu_of(host::ThreadId t) const {
  return t == host::kIdle ? nullptr : thread_vcpu_[static_cast<std::size_t>(t)];
}

void KvmPlatform::attach(Simulation& sim) {
  sim_ = &sim;
  const scenario::HostSpec& hs = *sc_.host;
  host::HostScheduler::Topology topo;
  topo.pcpus = sim.topology().cpus();
  for (int p = 0; p < topo.pcpus; ++p) {
    topo.socket_of.push_back(sim.topology().socket_of(p));
    topo.core_of.push_back(sim.topology().core_of(p));
  }
  sched_ = std::make_unique<host::HostScheduler>(
      hs, topo, static_cast<host::HostScheduler::Listener&>(*this));
  state_.assign(static_cast<std::size_t>(sim.vcpu_count()), VcpuState{});
  per_guest_.assign(sim.guests().size(), HostCounters{});
  last_boosted_.assign(sim.guests().size(), 0);
  // Guests are created in scenario order, `count` copies of each [[vm]].
  for (const scenario::VmSpec& vm : sc_.vms)
    for (int c = 0; c < vm.count; ++c)
      guest_pinned_.push_back(vm.placement == scenario::VmSpec::Placement::pinned);
  guest_pinned_.resize(sim.guests().size(), false);

  // Placement: pinned VMs take dedicated pCPUs in order; floating vCPUs are spread round
  // robin over all pCPUs, as the host's wake-up balancing would leave them.
  int next_pinned = 0;
  int next_float = 0;
  for (auto& g : sim.guests()) {
    const bool pinned = guest_pinned_[static_cast<std::size_t>(g->index())];
    for (int i = 0; i < g->vcpu_count(); ++i) {
      Vcpu& v = g->vcpu(i);
      const int home = pinned ? next_pinned++ % topo.pcpus : next_float++ % topo.pcpus;
      VcpuState& s = st(v);
      s.thread = sched_->add_thread(home, pinned);
      s.ple_window = hs.kvm.ple_window_cycles;
      v.pcpu = home;
      thread_vcpu_.resize(static_cast<std::size_t>(s.thread) + 1, nullptr);
      thread_vcpu_[static_cast<std::size_t>(s.thread)] = &v;
      // Until the host scheduler puts it on a pCPU, a vCPU does not run.
      sim.vcpu_stop(v);
    }
  }
  // Other host load (stress --cpu N): always-runnable threads.
  for (int i = 0; i < hs.stress_threads; ++i) {
    const host::ThreadId t = sched_->add_thread(next_float++ % topo.pcpus, false);
    thread_vcpu_.resize(static_cast<std::size_t>(t) + 1, nullptr);
  }
  if (hs.housekeeping_interval_ns > 0 && hs.housekeeping_ns > 0) {
    hk_rng_.reseed(derive_seed(sim.seed(), 0x4b57, 0));
    for (int p = 0; p < topo.pcpus; ++p) {
      const host::ThreadId t = sched_->add_sleeping_thread(p, true);
      thread_vcpu_.resize(static_cast<std::size_t>(t) + 1, nullptr);
      hk_thread_.push_back(t);
    }
    hk_exec_start_.assign(hk_thread_.size(), 0);
  }
  if (sim.scenario().faults.preempt_at_access > 0) add_hog_threads(topo.pcpus);
  sched_->start(sim.now(), derive_seed(sim.seed(), 0x4057, 0));
  for (int p = 0; p < static_cast<int>(hk_thread_.size()); ++p) arm_housekeeping_wake(p);
  sim.queue().push(sim.now() + hs.tick_ns, EventKind::host, 0, 0, kTick);
}

bool KvmPlatform::pv_unhalt(const Guest&) const { return sc_.host->kvm.pv_unhalt; }

void KvmPlatform::count_wake_wait(const Vcpu& v, std::int64_t waited) {
  using Cause = host::HostScheduler::Cause;
  const Cause why = sched_->cause();
  for (HostCounters* c : {&counters_, &gc(v)}) {
    c->wake_queued_wait_ns += waited;
    ++c->wake_waits_ended;
    if (why == Cause::yield) ++c->wake_waits_ended_by_yield;
    if (why == Cause::block) ++c->wake_waits_ended_by_block;
    if (why == Cause::tick) ++c->wake_waits_ended_by_tick;
  }
}

void KvmPlatform::measure_start() {
  counters_ = HostCounters{};
  for (HostCounters& c : per_guest_) c = HostCounters{};
  // Steal of the window counts from its start, also for a vCPU already waiting.
  const std::int64_t now = sim_->now();
  for (VcpuState& s : state_)
    if (s.runnable_since >= 0 && s.runnable_since < now) {
      s.steal_total += now - s.runnable_since;  // the run's total keeps the part before
      s.runnable_since = now;
    }
}

void KvmPlatform::account_steal(Vcpu& v, std::int64_t now) {
  VcpuState& s = st(v);
  if (s.runnable_since >= 0) {
    counters_.steal_ns += now - s.runnable_since;
    gc(v).steal_ns += now - s.runnable_since;
    s.steal_total += now - s.runnable_since;
  }
  s.runnable_since = -1;
}

std::int64_t KvmPlatform::steal_ns(const Vcpu& v, std::int64_t now) const {
  const VcpuState& s = state_[static_cast<std::size_t>(v.index)];
  return s.steal_total + (s.runnable_since >= 0 ? now - s.runnable_since : 0);
}

std::int64_t KvmPlatform::steal_until(int guest, std::int64_t now) const {
  std::int64_t ns = per_guest_[static_cast<std::size_t>(guest)].steal_ns;
  for (int i = 0; i < sim_->vcpu_count(); ++i) {
    const Vcpu& v = sim_->vcpu(i);
    const VcpuState& s = state_[static_cast<std::size_t>(i)];
    if (v.guest->index() == guest && s.runnable_since >= 0) ns += now - s.runnable_since;
  }
  return ns;
}

std::uint32_t& KvmPlatform::gen_of(VcpuState& s, Timer kind) {
  return kind == kWake ? s.wake_gen : kind == kPollEnd ? s.poll_gen : s.ple_gen;
}

void KvmPlatform::arm_timer(Vcpu& v, std::int64_t at, Timer kind) {
  std::uint32_t& gen = gen_of(st(v), kind);
  ++gen;
  sim_->queue().push(at, EventKind::host, static_cast<std::uint32_t>(v.index), gen, kind);
}

// ---- Host housekeeping ----------------------------------------------------------------------

void KvmPlatform::arm_housekeeping_wake(int pcpu) {
  // Poisson arrivals: exponential gaps with the configured mean.
  const double mean = static_cast<double>(sc_.host->housekeeping_interval_ns);
  const double gap = -mean * std::log(1.0 - hk_rng_.uniform());
  sim_->queue().push(sim_->now() + std::max<Time>(1, nonneg_ns(gap)), EventKind::host,
                     static_cast<std::uint32_t>(pcpu), 0, kHkWake);
}

void KvmPlatform::housekeeping_event(int pcpu, Timer kind) {
  const std::int64_t now = sim_->now();
  const auto i = static_cast<std::size_t>(pcpu);
  const host::ThreadId t = hk_thread_[i];
  const std::int64_t burst = sc_.host->housekeeping_ns;
  if (kind == kHkWake) {
    // The kworker wakes with its sleeper credit and normally preempts the vCPU at once
    // (check_preempt_wakeup); afterwards CFS picks the leftmost vruntime, which is often
    // the other vCPU waiting on this pCPU: the slice boundary moves.
    hk_exec_start_[i] = sched_->exec_ns(t, now);
    sched_->wake(t, now);
    sim_->queue().push(now + burst, EventKind::host, static_cast<std::uint32_t>(pcpu), 0, kHkEnd);
    return;
  }
  // kHkEnd: block once it has had its burst of CPU time; if it has not run enough yet
  // (it waited behind a vCPU), look again when it could have.
  const std::int64_t ran = sched_->exec_ns(t, now) - hk_exec_start_[i];
  if (ran >= burst && sched_->running(t)) {
    sched_->block(t, now);
    arm_housekeeping_wake(pcpu);
    return;
  }
  sim_->queue().push(now + std::max<std::int64_t>(1, burst - ran), EventKind::host,
                     static_cast<std::uint32_t>(pcpu), 0, kHkEnd);
}

// ---- Host scheduler decisions -------------------------------------------------------------

void KvmPlatform::on_switch(int pcpu, host::ThreadId prev, host::ThreadId next, bool prev_runnable,
                            std::int64_t now) {
  trace::Tracer* tr = sim_->tracer();
  if (tr != nullptr) {
    const bool hk = static_cast<std::size_t>(pcpu) < hk_thread_.size() &&
                    hk_thread_[static_cast<std::size_t>(pcpu)] == next;
    const bool hog = static_cast<std::size_t>(pcpu) < hogs_.size() &&
                     hogs_[static_cast<std::size_t>(pcpu)].thread == next;
    const char* other = next == host::kIdle ? nullptr
                        : hk                ? "housekeeping"
                        : hog               ? "fault: host preemption"
                                            : "stress";
    tr->pcpu_switch(pcpu, vcpu_of(next), other, now);
  }
  if (Vcpu* v = vcpu_of(prev)) {
    VcpuState& s = st(*v);
    sim_->vcpu_stop(*v);
    if (s.pending_wake) {
      s.pending_wake = false;
      ++s.wake_gen;  // the start we were waiting for will not happen
      if (!s.exit_return) {
        ++counters_.switch_ins_cancelled;
        ++gc(*v).switch_ins_cancelled;
      }
    }
    ++s.ple_gen;  // a descheduled vCPU does not spin
    if (prev_runnable) {
      // kvm_sched_out(): the thread stays runnable, so the vCPU is "preempted"; the steal
      // time record tells the guest (vcpu_is_preempted), and it is a directed-yield target.
      s.ready = true;
      s.preempted = true;
      // kvm_arch_vcpu_put(): the privilege level is recorded only at an involuntary
      // preemption (kvm_arch_vcpu_in_kernel() reads this copy). The idle loop is kernel mode.
      s.preempted_in_kernel = v->curr == nullptr || v->curr->sym != Sym::workload;
      s.runnable_since = now;
      v->steal.preempted.hw_store(1);
      if (tr != nullptr) {
        // The same classification as the lock-holder/waiter preemption counters below.
        const char* why = s.spinning ? "lock waiter" : "other";
        if (!s.spinning && v->curr != nullptr && v->curr->preempt_count > 0) why = "lock holder";
        tr->instant(*v, "preempt", now, nullptr, why);
        tr->vcpu_off_reason(*v, trace::OffReason::preempted, now);
      }
      ++counters_.preemptions;
      ++gc(*v).preemptions;
      // A descheduled vCPU in a spinlock's spin loop is a preempted lock waiter; one with
      // preemption disabled outside a spin (a spinlock or OSQ section) a preempted holder.
      const Task* t = v->curr;
      if (s.spinning) {
        ++counters_.lock_waiter_preemptions;
        ++gc(*v).lock_waiter_preemptions;
      } else if (t != nullptr && t->preempt_count > 0) {
        ++counters_.lock_holder_preemptions;
        ++gc(*v).lock_holder_preemptions;
      }
    } else if (s.halt == HaltState::polling) {
      // Another thread joined this pCPU's run queue: kvm_vcpu_block()'s poll loop stops at
      // single_task_running() and the thread blocks (HostScheduler::set_polling).
      s.halt = HaltState::blocked;
      ++counters_.halt_blocks;
      ++gc(*v).halt_blocks;
      ++counters_.halt_polls_given_way;
      ++gc(*v).halt_polls_given_way;
      if (sc_.host->kvm.preempted_on_every_put) v->steal.preempted.hw_store(1);
    }
  }
  if (Vcpu* v = vcpu_of(next)) {
    VcpuState& s = st(*v);
    ++counters_.switch_ins;
    ++gc(*v).switch_ins;
    if (v->pcpu != pcpu) {
      ++counters_.migrations;
      ++gc(*v).migrations;
    }
    v->pcpu = pcpu;
    // Its wait in a run queue ends here (the host's run_delay, which the steal-time record
    // reports); the switch that follows is the host running it.
    account_steal(*v, now);
    if (s.queued_since >= 0) {
      count_wake_wait(*v, now - s.queued_since);
      s.queued_since = -1;
    }
    // Switching to a vCPU costs the host context switch and VM entry; waking one on an idle
    // pCPU costs the idle exit and wake-up path (costs.md §6).
    const double latency =
        prev == host::kIdle ? sc_.costs.host_wake_idle_ns : sc_.costs.vcpu_switch_ns;
    // A thread woken by an interrupt its halted guest cannot take goes back into
    // kvm_vcpu_block()'s loop: it re-checks and calls schedule() to block again, in host
    // kernel code where a PREEMPT_VOLUNTARY host does not preempt it. A reschedule of this
    // pCPU meanwhile does not take it off: it blocks (kWake below).
    if (s.halt == HaltState::checking) sched_->set_nonpreemptible(s.thread, true);
    s.pending_wake = true;
    s.exit_return = false;
    arm_timer(*v, now + nonneg_ns(latency), kWake);
  }
}

void KvmPlatform::wake_vcpu(Vcpu& v) {
  VcpuState& s = st(v);
  const std::int64_t now = sim_->now();
  s.halt = HaltState::none;
  // kvm_vcpu_wake_up(): with the interrupt-delivery boost (d73eb57b80b) a woken vCPU is
  // "ready", i.e. a directed-yield candidate, until it runs.
  if (sc_.host->kvm.irq_boost) s.ready = true;
  s.runnable_since = now;
  if (trace::Tracer* tr = sim_->tracer()) tr->vcpu_off_reason(v, trace::OffReason::woken, now);
  const host::HostScheduler::WakeOutcome outcome = sched_->wake(s.thread, now);
  using WO = host::HostScheduler::WakeOutcome;
  // Waiting in a run queue: queued, or a preemption that picked another thread.
  if (outcome != WO::not_blocked && !sched_->running(s.thread)) s.queued_since = now;
  if (outcome != WO::not_blocked) {
    std::uint64_t HostCounters::*field = outcome == WO::onto_idle  ? &HostCounters::wakes_onto_idle
                                         : outcome == WO::preempts ? &HostCounters::wakes_preempting
                                                                   : &HostCounters::wakes_queued;
    ++(counters_.*field);
    ++(gc(v).*field);
  }
  // (A vCPU halt-polling on that pCPU has given way to it: on_switch().)
}

// ---- Exits ---------------------------------------------------------------------------------

double KvmPlatform::halt(Vcpu& v) {
  VcpuState& s = st(v);
  const std::int64_t now = sim_->now();
  ++counters_.exits_hlt;
  ++gc(v).exits_hlt;
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
    s.poll_ns = kvm.halt_poll_shrink == 0 ? 0 : s.poll_ns / kvm.halt_poll_shrink;
  };
  if (kvm.halt_poll_ns > 0) {
    if (block_ns <= s.poll_ns) {
      // the poll caught it: keep the window
    } else if (s.poll_ns > 0 && block_ns > kvm.halt_poll_ns) {
      shrink();
    } else if (s.poll_ns < kvm.halt_poll_ns && block_ns < kvm.halt_poll_ns) {
      std::int64_t grown = s.poll_ns * kvm.halt_poll_grow;
      if (grown < kvm.halt_poll_grow_start_ns) grown = kvm.halt_poll_grow_start_ns;
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
  if (sc_.host->kvm.irq_boost && !sched_->running(t.thread)) t.ready = true;
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
  if (sc_.host->kvm.irq_boost) s.ready = true;
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

// ---- Pause-loop exiting ----------------------------------------------------------------------

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

// ---- Events ------------------------------------------------------------------------------------

void KvmPlatform::on_event(const Event& e) {
  const std::int64_t now = sim_->now();
  const auto& hs = *sc_.host;
  if (e.arg == kTick) {
    for (int p = 0; p < sched_->pcpus(); ++p) sched_->tick(p, now);
    // trigger_load_balance(): every tick looks whether a domain's balance is due.
    sched_->balance(now);
    sim_->queue().push(now + hs.tick_ns, EventKind::host, 0, 0, kTick);
    return;
  }
  if (e.arg == kHkWake || e.arg == kHkEnd) {
    housekeeping_event(static_cast<int>(e.target), static_cast<Timer>(e.arg));
    return;
  }
  if (e.arg == kHogEnd) {
    hog_end(static_cast<int>(e.target));
    return;
  }
  Vcpu& v = sim_->vcpu(static_cast<int>(e.target));
  VcpuState& s = st(v);
  if (e.gen != gen_of(s, static_cast<Timer>(e.arg))) return;  // superseded
  switch (e.arg) {
    case kWake: {
      s.pending_wake = false;
      sched_->set_nonpreemptible(s.thread, false);
      if (!sched_->running(s.thread)) return;
      if (s.halt == HaltState::checking) {
        // kvm_sched_in() cleared ready; kvm_vcpu_check_block() finds nothing the halted
        // guest can take, and the thread blocks again without entering the guest.
        s.ready = false;
        s.preempted = false;
        s.halt = HaltState::blocked;
        sched_->block(s.thread, now);
        return;
      }
      s.pi_on = false;  // guest entry syncs the posted interrupts
      if (s.exit_return) {
        // Back from a PLE exit that did not yield: the spin goes on, the window stays grown.
        s.exit_return = false;
        entered_after_kick(v, now);
        sim_->vcpu_start(v);
        if (s.spinning && hs.kvm.ple) schedule_ple(v);
        return;
      }
      // kvm_sched_in() + record_steal_time(): not preempted any more; PLE window reset.
      s.ready = false;
      s.preempted = false;
      s.ple_window = hs.kvm.ple_window_cycles;
      s.spin_loop.scheduled_in(handler_scoped_spin_mark());
      v.steal.preempted.hw_store(0);
      entered_after_kick(v, now);
      if (s.poll_adapt_at_entry) {
        s.poll_adapt_at_entry = false;
        adapt_halt_poll(s, now - s.halt_start);
      }
      sim_->vcpu_start(v);
      if (s.spinning && hs.kvm.ple) schedule_ple(v);
      return;
    }
    case kPollEnd:
      if (s.halt != HaltState::polling || !v.halted) return;
      ++counters_.halt_blocks;
      ++gc(v).halt_blocks;
      // (A polling thread is never preempted: it gives way instead, see on_switch().)
      s.halt = HaltState::blocked;
      if (hs.kvm.preempted_on_every_put) v.steal.preempted.hw_store(1);
      sched_->block(s.thread, now);
      return;
    case kPle: {
      if (!s.spinning || !v.running) return;
      ++counters_.exits_ple;
      ++gc(v).exits_ple;
      if (trace::Tracer* tr = sim_->tracer()) tr->instant(v, "PLE exit", now);
      // grow_ple_window(): each exit doubles the window (up to the maximum).
      s.ple_window = std::min(s.ple_window * hs.kvm.ple_window_grow, hs.kvm.ple_window_max_cycles);
      kvm_vcpu_on_spin(v);
      if (sched_->running(s.thread) && v.running) {
        // No yield: the exit itself costs the vCPU a round trip, then the spin goes on.
        sim_->vcpu_stop(v);
        if (trace::Tracer* tr = sim_->tracer())
          tr->vcpu_off_reason(v, trace::OffReason::ple_exit, now);
        s.pending_wake = true;
        s.exit_return = true;
        arm_timer(v, now + nonneg_ns(sc_.costs.vmexit_ns), kWake);
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace pvlock::sim
