// SPDX-License-Identifier: GPL-2.0-only
// KvmPlatform: setup, steal-time accounting, timers, host housekeeping, the host
// scheduler's switch callbacks and event dispatch. The guest's exits are in kvm_exits.cpp,
// pause-loop exiting in kvm_pause_loop.cpp, the fault-injection hogs in host_hog.cpp.
#include "sim/host/kvm_platform.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/engine/rng.hpp"
#include "sim/guest/guest.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

KvmPlatform::KvmPlatform(const scenario::Scenario& sc) : sc_(sc) {}
KvmPlatform::~KvmPlatform() = default;

HostCounters& KvmPlatform::gc(const Vcpu& v) {
  return per_guest_[static_cast<std::size_t>(v.guest->index())];
}

void KvmPlatform::update_dy(const Vcpu& v) {
  const VcpuState& s = st(v);
  const auto& kvm = sc_.host->kvm;
  // pick_directed_yield()'s kernel-mode rule skips a ready vCPU preempted in user mode (every
  // such vCPU when 046ddeed is absent) unless an interrupt is pending and the host exempts it.
  const bool mode_ok = kvm.irq_boost_user_mode || s.preempted_in_kernel ||
                       (kvm.in_kernel_check_preempted_only && !s.preempted);
  auto& word =
      dy_bits_[static_cast<std::size_t>(v.guest->index())][static_cast<std::size_t>(v.id) / 64];
  const std::uint64_t bit = std::uint64_t{1} << (v.id % 64);
  if (s.ready && mode_ok)
    word |= bit;
  else
    word &= ~bit;
}

int KvmPlatform::next_dy_candidate(int guest, int from) const {
  const auto& bits = dy_bits_[static_cast<std::size_t>(guest)];
  const int n = sim_->guests()[static_cast<std::size_t>(guest)]->vcpu_count();
  if (from >= n) return n;
  auto w = static_cast<std::size_t>(from) / 64;
  std::uint64_t word = bits[w] & (~std::uint64_t{0} << (from % 64));
  for (;;) {
    if (word != 0) return std::min(n, static_cast<int>(w * 64) + std::countr_zero(word));
    if (++w == bits.size()) return n;
    word = bits[w];
  }
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
  dy_bits_.clear();
  for (auto& g : sim.guests())
    dy_bits_.emplace_back(static_cast<std::size_t>(g->vcpu_count() + 63) / 64, 0);
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
      s.ple_window = hs.kvm.ple_window;
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

std::uint32_t KvmPlatform::timer_slot(Timer kind) {
  return kind == kWake ? 0 : kind == kPollEnd ? 1 : 2;
}

void KvmPlatform::arm_timer(Vcpu& v, std::int64_t at, Timer kind) {
  std::uint32_t& gen = gen_of(st(v), kind);
  ++gen;
  sim_->arm_vcpu_timer(v, timer_slot(kind), at, gen, kind);
}

void KvmPlatform::cancel_timer(Vcpu& v, Timer kind) {
  ++gen_of(st(v), kind);
  sim_->cancel_vcpu_timer(v, timer_slot(kind));
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
      cancel_timer(*v, kWake);  // the start we were waiting for will not happen
      if (!s.exit_return) {
        ++counters_.switch_ins_cancelled;
        ++gc(*v).switch_ins_cancelled;
      }
    }
    cancel_timer(*v, kPle);  // a descheduled vCPU does not spin
    if (prev_runnable) {
      // kvm_sched_out(): the thread stays runnable, so the vCPU is "preempted"; the steal
      // time record tells the guest (vcpu_is_preempted), and it is a directed-yield target.
      s.ready = true;
      s.preempted = true;
      // kvm_arch_vcpu_put(): the privilege level is recorded only at an involuntary
      // preemption (kvm_arch_vcpu_in_kernel() reads this copy). The idle loop is kernel mode.
      s.preempted_in_kernel = v->curr == nullptr || v->curr->sym != Sym::workload;
      update_dy(*v);
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
    // pCPU costs the idle exit and wake-up path (docs/costs.md).
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
  if (sc_.host->kvm.irq_boost) {
    s.ready = true;
    update_dy(v);
  }
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

// ---- Events ------------------------------------------------------------------------------------

const char* KvmPlatform::event_name(std::uint8_t arg) const {
  switch (static_cast<Timer>(arg)) {
    case kTick:
      return "host_tick";
    case kPollEnd:
      return "halt_poll_end";
    case kPle:
      return "ple_window";
    case kWake:
      return "vcpu_entry";
    case kHkWake:
      return "housekeeping_wake";
    case kHkEnd:
      return "housekeeping_end";
    case kHogEnd:
      return "hog_end";
  }
  return "host";
}

bool KvmPlatform::on_event(const Event& e) {
  const std::int64_t now = sim_->now();
  const auto& hs = *sc_.host;
  if (e.arg == kTick) {
    for (int p = 0; p < sched_->pcpus(); ++p) sched_->tick(p, now);
    // trigger_load_balance(): every tick looks whether a domain's balance is due.
    sched_->balance(now);
    sim_->queue().push(now + hs.tick_ns, EventKind::host, 0, 0, kTick);
    return true;
  }
  if (e.arg == kHkWake || e.arg == kHkEnd) {
    housekeeping_event(static_cast<int>(e.target), static_cast<Timer>(e.arg));
    return true;
  }
  if (e.arg == kHogEnd) {
    hog_end(static_cast<int>(e.target));
    return true;
  }
  Vcpu& v = sim_->vcpu(static_cast<int>(e.target));
  VcpuState& s = st(v);
  if (e.gen != gen_of(s, static_cast<Timer>(e.arg))) return false;  // superseded
  switch (e.arg) {
    case kWake: {
      s.pending_wake = false;
      sched_->set_nonpreemptible(s.thread, false);
      if (!sched_->running(s.thread)) return true;
      if (s.halt == HaltState::checking) {
        // kvm_sched_in() cleared ready; kvm_vcpu_check_block() finds nothing the halted
        // guest can take, and the thread blocks again without entering the guest.
        s.ready = false;
        s.preempted = false;
        update_dy(v);
        s.halt = HaltState::blocked;
        sched_->block(s.thread, now);
        return true;
      }
      s.pi_on = false;  // guest entry syncs the posted interrupts
      if (s.exit_return) {
        // Back from a PLE exit that did not yield: the spin goes on, the window stays grown.
        s.exit_return = false;
        entered_after_kick(v, now);
        sim_->vcpu_start(v);
        if (s.spinning && hs.kvm.ple) schedule_ple(v);
        return true;
      }
      // kvm_sched_in() + record_steal_time(): not preempted any more; PLE window reset.
      s.ready = false;
      s.preempted = false;
      update_dy(v);
      s.ple_window = hs.kvm.ple_window;
      s.spin_loop.scheduled_in(handler_scoped_spin_mark());
      v.steal.preempted.hw_store(0);
      entered_after_kick(v, now);
      if (s.poll_adapt_at_entry) {
        s.poll_adapt_at_entry = false;
        adapt_halt_poll(s, now - s.halt_start);
      }
      sim_->vcpu_start(v);
      if (s.spinning && hs.kvm.ple) schedule_ple(v);
      return true;
    }
    case kPollEnd:
      if (s.halt != HaltState::polling || !v.halted) return true;
      ++counters_.halt_blocks;
      ++gc(v).halt_blocks;
      // (A polling thread is never preempted: it gives way instead, see on_switch().)
      s.halt = HaltState::blocked;
      if (hs.kvm.preempted_on_every_put) v.steal.preempted.hw_store(1);
      sched_->block(s.thread, now);
      return true;
    case kPle:
      handle_pause(v);
      return true;
    default:
      return true;
  }
}

}  // namespace pvlock::sim
