// SPDX-License-Identifier: GPL-2.0-only
// Guest: a VM's kernel. This file holds its tasks and statistics, the fibers tasks run on,
// and time (charging work, waiting, IPIs sent); the scheduler is in guest_sched.cpp, lazy
// spinning in guest_spin.cpp, interrupts, ticks and kicks in guest_irq.cpp.
#include "sim/guest/guest.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "sim/context.hpp"
#include "sim/engine/rng.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

namespace {
constexpr std::uint64_t kTaskSeedDomain = 0x100;
}  // namespace

std::size_t Guest::next_slot_id() {
  static std::atomic<std::size_t> next{0};
  return next.fetch_add(1);
}

Guest::Guest(Simulation& sim, int index, std::string name, const scenario::GuestSpec& spec,
             int vcpus, int first_global_vcpu)
    : sim_(sim), index_(index), name_(std::move(name)), spec_(spec), policies_(spec.policies) {
  for (int i = 0; i < vcpus; ++i) {
    auto v = std::make_unique<Vcpu>();
    v->id = i;
    v->index = first_global_vcpu + i;
    v->pcpu = i;
    v->guest = this;
    // At most one outstanding call from each other CPU, twice over for tasks sharing a vCPU.
    v->irq_acks.reserve(static_cast<std::size_t>(2 * vcpus + 8));
    vcpus_.push_back(std::move(v));
  }
}

Guest::~Guest() {
  // Fibers unwind first (their frames may still refer to kernel objects), then the objects.
  tasks_.clear();
  for (Slot& s : slots_)
    if (s.ptr != nullptr) s.del(s.ptr);
}

Task& Guest::create_task(std::string name, int vcpu, std::function<void()> program, bool forked) {
  auto t = std::make_unique<Task>();
  Task* raw = t.get();
  raw->id = static_cast<int>(tasks_.size());
  raw->guest = this;
  raw->vcpu = vcpus_[static_cast<std::size_t>(vcpu)].get();
  if (forked && cfs()) raw->vruntime = raw->vcpu->min_vruntime + spec_.sched_min_granularity_ns;
  raw->name = std::move(name);
  raw->rng.reseed(derive_seed(sim_.seed(), kTaskSeedDomain + static_cast<std::uint64_t>(index_),
                              static_cast<std::uint64_t>(raw->id)));
  raw->program = std::move(program);
  for (auto& w : raw->watch) w.waiter = raw;
  raw->fiber.start([raw] {
    raw->on_cpu.v.hw_store(1);
    raw->program();
    raw->on_cpu.v.hw_store(0);
    raw->blocked = true;
  });
  tasks_.push_back(std::move(t));
  enqueue(*raw->vcpu, *raw);
  return *raw;
}

void Guest::start() {
  const int n = vcpu_count();
  for (int i = 0; i < n; ++i) {
    Vcpu& v = vcpu(i);
    v.slice_start = 0;
    v.curr = dequeue(v);
    if (v.curr != nullptr) {
      sim_.schedule_resume(v, 0);
    } else {
      v.halted = true;
      v.idle_since = 0;
    }
    // Ticks of different CPUs are spread over one period, as they are not synchronised.
    const Time first = spec_.tick_ns + spec_.tick_ns * i / std::max(1, n);
    sim_.queue().push(first, EventKind::vcpu_tick, static_cast<std::uint32_t>(v.index), 0);
  }
}

void Guest::reset_stats() {
  counters_ = LockEventCounts{};
  profile_.reset();
  for (LockStat* s : lock_stats_) s->reset();
}

void Guest::add_interval(Sym s, Time since) {
  const Time from = std::max(since, sim_.measure_start());
  if (sim_.now() > from) profile_.add(s, static_cast<double>(sim_.now() - from));
}

void Guest::finish_stats() {
  for (auto& vp : vcpus_) {
    Vcpu& v = *vp;
    if (v.curr == nullptr && v.halted)
      add_interval(Sym::idle, v.idle_since);
    else if (v.halted && v.halt_for_pv)
      add_interval(Sym::halted, v.halt_since);
  }
}

// ---- Fibers ----------------------------------------------------------------------------------

void Guest::yield(Task& t) { t.fiber.yield(); }

void Guest::resume_task(Task& t) {
  tl_ctx.task = &t;
  t.fiber.resume();
  tl_ctx.task = nullptr;
  if (t.fiber.done()) after_task_exit(*t.vcpu);
}

void Guest::after_task_exit(Vcpu& v) {
  v.curr = dequeue(v);
  v.slice_start = clock_task(v);
  if (v.curr != nullptr) {
    sim_.schedule_resume(v, sim_.now());
  } else {
    v.halted = true;
    v.idle_since = sim_.now();
  }
  trace_vcpu(v);
}

int Guest::per_cpu_owner(const void* p) const {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const Slot& s : slots_) {
    if (s.ptr == nullptr || s.n != vcpu_count()) continue;
    const auto base = reinterpret_cast<std::uintptr_t>(s.ptr);
    if (a >= base && a < base + s.elem * static_cast<std::size_t>(s.n))
      return static_cast<int>((a - base) / s.elem);
  }
  return -1;
}

void Guest::trace_vcpu(Vcpu& v) {
  if (trace::Tracer* tr = sim_.tracer()) tr->vcpu_update(v, sim_.now());
}

bool Guest::rearm_wait(Task& t) {
  // The first pass of wait()'s loop after its yield, when all it would do is re-arm the
  // resume: no interrupt to take, no preemption, no watched write, the target not reached
  // and no inline step. Then the fiber need not run -- a vCPU scheduled in again in the
  // middle of a wait re-arms it so -- and what it would have done is done here, in the
  // same order on the same state.
  Vcpu& v = *t.vcpu;
  if (!t.irqs_off && (v.tick_pending || v.irq_pending_ns > 0 || !v.irq_acks.empty())) return false;
  if (should_preempt(t)) return false;
  if (t.wait_watchable && t.watch_fired) return false;
  const Time rt = v.runtime(sim_.now());
  if (rt >= v.wait_target_rt) return false;
  const Time remaining = v.wait_target_rt - rt;
  if (v.running && (v.irq_pending_ns <= 0 || t.irqs_off) && sim_.can_advance_inline(remaining))
    return false;
  if (v.running) sim_.schedule_resume(v, sim_.now() + remaining);
  return true;
}

void Guest::dispatch(Vcpu& v) {
  trace_vcpu(v);
  if (v.curr != nullptr) {
    if (!v.curr->in_wait || !rearm_wait(*v.curr)) resume_task(*v.curr);
    return;
  }
  // Idle loop: finish interrupt handlers that were waiting for the vCPU to run, then run
  // what became runnable, else halt again.
  run_irq_acks(v);
  v.curr = dequeue(v);
  if (v.curr == nullptr) {
    idle_halt(v);
    return;
  }
  v.halted = false;
  v.slice_start = clock_task(v);
  trace_vcpu(v);
  resume_task(*v.curr);
}

// ---- Time ------------------------------------------------------------------------------------

void Guest::charge(Task& t, double ns, Sym s) {
  t.pending_ns += ns;
  profile_.add(s, ns);
}

void Guest::charge_call(Task& t, double ns, Sym s) {
  if (t.loads_settled) return;  // as in count()
  charge(t, ns, s);
  if (t.recording) {
    t.rec_hit_ns += ns;
    t.rec_call_ns += ns;
  }
}

void Guest::sync(Task& t) {
  if (t.pending_ns < 1) return;
  const auto adv = static_cast<Time>(t.pending_ns);
  t.pending_ns -= static_cast<double>(adv);
  wait(t, adv, false);
}

double Guest::run_irqs(Task& t) {
  Vcpu& v = *t.vcpu;
  if (v.tick_pending) {
    // The deferred timer interrupt runs now: scheduler_tick() looks at the slice, and the
    // handler programs the next deadline.
    v.tick_pending = false;
    if (slice_over(v)) set_need_resched(v);
  }
  if (v.irq_pending_ns <= 0 && v.irq_acks.empty()) return 0;
  const double c = v.irq_pending_ns;
  v.irq_pending_ns = 0;
  v.irq_waiting = false;
  profile_.add(Sym::irq, c);
  run_irq_acks(v);
  return c;
}

void Guest::run_irq_acks(Vcpu& v) {
  for (SimAtomic<std::uint32_t>* a : v.irq_acks) a->hw_store(a->raw() - 1);
  v.irq_acks.clear();
}

bool Guest::send_ipi(Task& t, int cpu, double handler_ns, SimAtomic<std::uint32_t>* ack) {
  Vcpu& to = vcpu(cpu);
  if (ack != nullptr && !to.irq_acks.empty()) {
    // smp_call_function_many(): llist_add() onto a call_single_queue that is not empty
    // leaves the target out of cpumask_ipi. The IPI already pending there runs every queued
    // function, this one included, so no IPI is sent (no ICR write, no kick).
    to.irq_acks.push_back(ack);
    to.irq_pending_ns += handler_ns;
    return false;
  }
  charge(t, ipi(*t.vcpu, to, handler_ns, ack), t.sym);
  return true;
}

void Guest::call_function_ipis_sent(Task& t, const std::vector<std::uint8_t>& targets) {
  // KVM_FEATURE_PV_SCHED_YIELD (v5.3 guests), not used under KVM_HINTS_REALTIME. The first
  // preempted target only: the host is asked once per call. (The 2019 loop has no
  // idle_cpu() test; guests since 2022 skip idle targets, which ebizzy never has.)
  if (!spec_.pv_sched_yield || spec_.realtime_hint) return;
  for (int c = 0; c < vcpu_count(); ++c) {
    if (targets[static_cast<std::size_t>(c)] == 0 || !vcpu_is_preempted(t, c)) continue;
    charge(t, sim_.platform().sched_yield(*t.vcpu, vcpu(c)), t.sym);
    return;
  }
}

double Guest::ipi(Vcpu& from, Vcpu& to, double handler_ns, SimAtomic<std::uint32_t>* ack) {
  if (sim_.faults().intercept_ipi(from, to, handler_ns, ack)) return sim_.costs().ipi_send_ns;
  if (ack != nullptr) to.irq_acks.push_back(ack);
  return sim_.platform().send_ipi(from, to, handler_ns);
}

bool Guest::should_preempt(Task& t) {
  // CONFIG_PREEMPT_NONE: no involuntary switch inside the kernel (preempt_enable() and the
  // return from an interrupt do not call schedule()); exit_to_usermode_loop() does.
  if (t.in_kernel && spec_.preempt == scenario::GuestSpec::Preempt::none) return false;
  return t.preemptible() && (t.vcpu->ti.flags.raw() & kTifNeedResched) != 0;
}

void Guest::kernel_enter(Task& t) { t.in_kernel = true; }

void Guest::kernel_exit(Task& t) {
  t.in_kernel = false;
  if (should_preempt(t)) schedule(t);
}

Time Guest::wait(Task& t, Time ns, bool watchable) {
  Vcpu& v = *t.vcpu;
  const Time rt0 = v.runtime(sim_.now());
  Time target = rt0 + ns;
  Time excluded = 0;  // interrupt handlers and time switched out
  for (;;) {
    if (const double irq = take_irqs(t); irq > 0) {
      target += round_ns(irq);
      excluded += round_ns(irq);
    }
    if (should_preempt(t)) {
      const Time rem = target - v.runtime(sim_.now());
      const Time before = v.runtime(sim_.now());
      schedule(t);
      excluded += v.runtime(sim_.now()) - before;
      target = v.runtime(sim_.now()) + rem;
    }
    if (watchable && t.watch_fired) break;
    const Time rt = v.runtime(sim_.now());
    if (rt >= target) break;
    const Time remaining = target - rt;
    if (v.running && (v.irq_pending_ns <= 0 || t.irqs_off) && sim_.try_advance_inline(remaining))
      continue;
    v.wait_target_rt = target;
    if (v.running) sim_.schedule_resume(v, sim_.now() + remaining);
    t.in_wait = true;
    t.wait_watchable = watchable;
    yield(t);
    t.in_wait = false;
  }
  v.wait_target_rt = kNever;
  return std::max<Time>(0, v.runtime(sim_.now()) - rt0 - excluded);
}

void Guest::compute(Task& t, Time ns) {
  charge(t, static_cast<double>(ns), Sym::workload);
  sync(t);
}

void Guest::count(Task& t, LockEvent e, std::uint64_t n) {
  // Re-reading a spin condition as its loads completed (spin_until): not a new evaluation.
  if (t.loads_settled) return;
  counters_[e] += n;
  // pv_wait_early(): the decision to halt without spinning because prev is not running;
  // the predecessor is the owner of the MCS node the check read (prev->state).
  if (e == LockEvent::pv_wait_early)
    if (trace::Tracer* tr = sim_.tracer()) {
      const int prev = per_cpu_owner(t.check_addr);
      const Vcpu* pv = prev >= 0 ? &vcpu(prev) : nullptr;
      const char* state = nullptr;  // what prev's vCPU is doing now
      if (pv != nullptr) state = pv->halted ? "halted" : pv->running ? "running" : "preempted";
      tr->instant(*t.vcpu, "pv_wait_early", sim_.now(), pv, state, "prev");
    }
  if (!t.recording) return;
  if (t.rec_count_n < kMaxRecordedCounts)
    t.rec_counts[static_cast<std::size_t>(t.rec_count_n++)] = {e, n};
  else
    t.rec_overflow = true;
}

}  // namespace pvlock::sim
