// SPDX-License-Identifier: GPL-2.0-only
// Guest, the scheduler of each vCPU: its run queue (round-robin or CFS-ordered, CFS's slice
// lengths), schedule/block/wake, need_resched, and the PV hooks that halt and kick
// (pv_wait, pv_kick) or read the steal-time flag (vcpu_is_preempted).
#include <algorithm>
#include <cmath>

#include "sim/guest/guest.hpp"
#include "sim/invariant.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

void Guest::enqueue(Vcpu& v, Task& t) {
  if (t.on_rq) return;
  t.on_rq = true;
  t.rq_since = sim_.now();
  t.rq_next = nullptr;
  if (v.rq_tail != nullptr)
    v.rq_tail->rq_next = &t;
  else
    v.rq_head = &t;
  v.rq_tail = &t;
  ++v.rq_len;
  PVLOCK_INVARIANT(v.rq_head != nullptr && v.rq_tail->rq_next == nullptr,
                   "a guest run queue is a list from rq_head to rq_tail");
}

Task* Guest::dequeue(Vcpu& v) {
  v.exec_start = clock_task(v);
  Task* t = v.rq_head;
  PVLOCK_INVARIANT((t == nullptr) == (v.rq_len == 0), "rq_len counts the guest run queue");
  if (t == nullptr) return nullptr;
  Task* before = nullptr;  // the task queued ahead of t
  if (cfs()) {
    // pick_next_entity(): the leftmost, i.e. least vruntime (the earliest queued on ties).
    for (Task *p = v.rq_head, *c = p->rq_next; c != nullptr; p = c, c = c->rq_next)
      if (c->vruntime < t->vruntime) {
        t = c;
        before = p;
      }
    // update_min_vruntime(): it only moves forward, here to the picked task's vruntime.
    v.min_vruntime = std::max(v.min_vruntime, t->vruntime);
  }
  (before != nullptr ? before->rq_next : v.rq_head) = t->rq_next;
  if (v.rq_tail == t) v.rq_tail = before;
  PVLOCK_INVARIANT(t->on_rq, "a task dequeued from a run queue was on it");
  t->rq_next = nullptr;
  t->on_rq = false;
  const Time queued = sim_.now() - t->rq_since;
  t->rq_wait += queued;
  // The woken waiter's wait for its vCPU ends here: once it runs, whatever it does next
  // (take the lock, or lose it and sleep again) is its own progress or lack of it.
  if (t->woken_for_lock) t->woken_rq_wait += queued;
  t->woken_for_lock = false;
  --v.rq_len;
  PVLOCK_INVARIANT(
      (v.rq_head == nullptr) == (v.rq_len == 0) && (v.rq_head == nullptr) == (v.rq_tail == nullptr),
      "rq_len counts the guest run queue");
  return t;
}

const Task* Guest::leftmost(const Vcpu& v) const {
  const Task* l = v.rq_head;
  for (const Task* c = l; c != nullptr; c = c->rq_next)
    if (c->vruntime < l->vruntime) l = c;
  return l;
}

Time Guest::clock_task(const Vcpu& v) const {
  const Time now = sim_.now();
  return spec_.steal_time_accounting ? now - sim_.platform().steal_ns(v, now) : now;
}

const Task* Guest::update_curr(Vcpu& v) {
  const Time now = clock_task(v);
  const Task* l = nullptr;
  if (v.curr != nullptr) {
    v.curr->vruntime += now - v.exec_start;
    // update_min_vruntime(): the lesser of the running task's and the leftmost's vruntime,
    // never moving back.
    l = leftmost(v);
    const Time m = l == nullptr ? v.curr->vruntime : std::min(v.curr->vruntime, l->vruntime);
    v.min_vruntime = std::max(v.min_vruntime, m);
  }
  v.exec_start = now;
  return l;
}

bool Guest::wakeup_preempts(Vcpu& v, const Task& t) {
  if (v.curr == nullptr || !cfs()) return true;
  update_curr(v);
  return v.curr->vruntime - t.vruntime > spec_.sched_wakeup_granularity_ns;
}

bool Guest::slice_over(Vcpu& v) {
  if (v.rq_len == 0) return false;
  const Time ran = clock_task(v) - v.slice_start;
  // sched_slice(), in either order: the latency shared among the runnable tasks, but never
  // less than the minimum granularity (sched_min_granularity_ns), so two CPU-bound tasks take 12 ms
  // turns and eight or more take 3 ms ones (__sched_period() stretching the period).
  const int nr = v.rq_len + 1;
  const Time ideal = std::max<Time>(spec_.sched_min_granularity_ns, spec_.sched_latency_ns / nr);
  if (ran >= ideal) return true;
  if (!cfs()) return false;
  // check_preempt_tick() also makes a task give way once it has run its minimum and is
  // more than a slice of vruntime ahead of the leftmost.
  if (ran < spec_.sched_min_granularity_ns) return false;
  return v.curr->vruntime - update_curr(v)->vruntime > ideal;
}

void Guest::set_need_resched(Vcpu& v) { v.ti.flags.hw_store(v.ti.flags.raw() | kTifNeedResched); }

void Guest::schedule(Task& t) {
  Vcpu& v = *t.vcpu;
  if ((v.ti.flags.raw() & kTifNeedResched) != 0)
    v.ti.flags.hw_store(v.ti.flags.raw() & ~kTifNeedResched);
  if (cfs()) update_curr(v);
  if (!t.blocked) enqueue(v, t);
  Task* next = dequeue(v);
  v.slice_start = clock_task(v);
  if (next == &t) return;
  t.on_cpu.v.hw_store(0);
  if (next != nullptr) {
    v.curr = next;
    sim_.schedule_resume(v, sim_.now());
  } else {
    v.curr = nullptr;
    sim_.cancel_resume(v);
    idle_halt(v);
  }
  yield(t);
  t.on_cpu.v.hw_store(1);
  charge(t, sim_.costs().guest_ctx_switch_ns, Sym::schedule);
}

void Guest::preempt_enable(Task& t) {
  if (t.preempt_count > 0) --t.preempt_count;
  if (should_preempt(t)) schedule(t);
}

void Guest::irq_enable(Task& t) {
  t.irqs_off = false;
  t.pending_ns += take_irqs(t);
  if (should_preempt(t)) schedule(t);
}

void Guest::prepare_block(Task& t) { t.state.v.store(1); }

void Guest::block(Task& t) {
  if (t.state.v.load() == 0) return;
  t.blocked = true;
  schedule(t);
}

void Guest::wake(Task& waker, Task& target) {
  if (target.state.v.exchange(0) == 0) return;
  charge(waker, sim_.costs().guest_wake_ns, Sym::wakeup);
  if (!target.blocked) return;  // still on its way to schedule(): it will see TASK_RUNNING
  target.blocked = false;
  if (target.waiting_for != nullptr) {
    target.woken_for_lock = true;
    target.woken_for = target.waiting_for;
  }
  select_wake_cpu(&waker, target);
  Vcpu& tv = *target.vcpu;
  if (cfs()) {
    // place_entity() for a wake-up: sleeper credit of half the latency (GENTLE_FAIR_SLEEPERS),
    // never moving a task back in vruntime.
    target.vruntime = std::max(target.vruntime, tv.min_vruntime - spec_.sched_latency_ns / 2);
  }
  enqueue(tv, target);
  const bool preempts = wakeup_preempts(tv, target);
  if (&tv == waker.vcpu) {
    // rr keeps the waker running (it is the one that asks); cfs may preempt it.
    if (cfs() && preempts && tv.curr != nullptr) set_need_resched(tv);
    return;
  }
  if (tv.curr != nullptr && preempts) set_need_resched(tv);
  // A resched IPI only where the wake-up preempts, or the vCPU idles (cfs); rr as before.
  if (cfs() && tv.curr != nullptr && !preempts) return;
  charge(waker, ipi(*waker.vcpu, tv, sim_.costs().ipi_handle_ns, nullptr), Sym::wakeup);
}

bool Guest::need_resched(Task& t) { return (t.vcpu->ti.flags.load() & kTifNeedResched) != 0; }

bool Guest::vcpu_is_preempted(Task& t, int cpu) {
  charge_call(t, spec_.vcpu_is_preempted_ns, Sym::vcpu_is_preempted);
  count(t, LockEvent::vcpu_is_preempted_calls, 1);
  return vcpu(cpu).steal.preempted.load() != 0;
}

void Guest::idle_halt(Vcpu& v) {
  v.halted = true;
  v.idle_since = sim_.now();
  trace_vcpu(v);
  const double cost = sim_.platform().halt(v);
  if (v.halted) return;
  // A pending pv_unhalted made the HLT return at once, after its exit and re-entry: the
  // idle loop looks at need_resched (its run queue) again and, with nothing to run, halts
  // again.
  profile_.add(Sym::idle, cost);
  trace_vcpu(v);
  sim_.schedule_resume(v, sim_.now() + round_ns(cost));
}

void Guest::pv_wait(Task& t, const SimAtomic<std::uint8_t>* ptr, std::uint8_t val) {
  Vcpu& v = *t.vcpu;
  // kvm_wait(): no halt if the lock byte already changed. A kick already delivered
  // (pv_unhalted) is not looked at here: the HLT consumes it (Platform::halt), and when no
  // HLT follows it stays for the next one, the idle loop's included.
  if (ptr->load() != val) return;
  v.halted = true;
  v.halt_for_pv = true;
  v.halt_since = sim_.now();
  sim_.cancel_resume(v);
  if (trace::Tracer* tr = sim_.tracer()) {
    tr->instant(v, "halt", sim_.now(), nullptr, "pv_wait");
    tr->vcpu_update(v, sim_.now());
  }
  sim_.watchdog().trace().add(sim_.now(), TraceKind::pv_halt, v.index);
  sim_.faults().on_pv_halt(v);
  const double cost = sim_.platform().halt(v);
  while (v.halted) yield(t);
  sim_.faults().on_pv_woken(v);
  v.halt_for_pv = false;
  add_interval(Sym::halted, v.halt_since);
  if (cost > 0) charge(t, cost, Sym::halted);
}

void Guest::pv_kick(Task& t, int cpu) {
  if (trace::Tracer* tr = sim_.tracer()) tr->instant(*t.vcpu, "pv_kick", sim_.now(), &vcpu(cpu));
  Vcpu& to = vcpu(cpu);
  sim_.watchdog().trace().add(sim_.now(), TraceKind::kick, to.index, t.vcpu->index);
  // A dropped or deferred kick still cost the sender its hypercall.
  if (sim_.faults().intercept_kick(*t.vcpu, to))
    charge(t, sim_.costs().hypercall_ns + sim_.costs().kick_send_ns, Sym::lock_ops);
  else
    charge(t, sim_.platform().kick(*t.vcpu, to), Sym::lock_ops);
}

void Guest::enter_spin_site(Task& t, SpinSite site) {
  t.spin_site = static_cast<int>(site);
  if (site == SpinSite::pv_wait_head_or_lock || site == SpinSite::qspinlock_head)
    sim_.faults().on_queue_head(t);
}

}  // namespace pvlock::sim
