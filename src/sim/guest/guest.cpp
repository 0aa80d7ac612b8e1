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
  if (forked && cfs()) raw->vruntime = raw->vcpu->min_vruntime + spec_.sched_slice_ns;
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

// ---- Run queues ----------------------------------------------------------------------------

void Guest::enqueue(Vcpu& v, Task& t) {
  if (t.on_rq) return;
  t.on_rq = true;
  t.rq_next = nullptr;
  if (v.rq_tail != nullptr)
    v.rq_tail->rq_next = &t;
  else
    v.rq_head = &t;
  v.rq_tail = &t;
  ++v.rq_len;
}

Task* Guest::dequeue(Vcpu& v) {
  v.exec_start = clock_task(v);
  Task* t = v.rq_head;
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
  t->rq_next = nullptr;
  t->on_rq = false;
  --v.rq_len;
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
  return v.curr->vruntime - t.vruntime > kCfsWakeupGranularityNs;
}

bool Guest::slice_over(Vcpu& v) {
  if (v.rq_len == 0) return false;
  const Time ran = clock_task(v) - v.slice_start;
  // sched_slice(), in either order: the latency shared among the runnable tasks, but never
  // less than the minimum granularity (sched_slice_ns), so two CPU-bound tasks take 12 ms
  // turns and eight or more take 3 ms ones (__sched_period() stretching the period).
  const int nr = v.rq_len + 1;
  const Time ideal = std::max<Time>(spec_.sched_slice_ns, kCfsLatencyNs / nr);
  if (ran >= ideal) return true;
  if (!cfs()) return false;
  // check_preempt_tick() also makes a task give way once it has run its minimum and is
  // more than a slice of vruntime ahead of the leftmost.
  if (ran < spec_.sched_slice_ns) return false;
  return v.curr->vruntime - update_curr(v)->vruntime > ideal;
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

void Guest::dispatch(Vcpu& v) {
  trace_vcpu(v);
  if (v.curr != nullptr) {
    resume_task(*v.curr);
    return;
  }
  // Idle loop: finish interrupt handlers that were waiting for the vCPU to run, then run
  // what became runnable, else halt again.
  run_irq_acks(v);
  v.curr = dequeue(v);
  if (v.curr == nullptr) {
    v.halted = true;
    v.idle_since = sim_.now();
    trace_vcpu(v);
    sim_.platform().halt(v);
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
    yield(t);
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

// ---- Lazy spinning ------------------------------------------------------------------------------

void Guest::begin_record(Task& t) {
  sync(t);
  t.recording = true;
  t.rec_lines = 0;
  t.rec_overflow = false;
  t.rec_missed = false;
  t.rec_queue_ns = 0;
  t.rec_hit_ns = 0;
  t.rec_call_ns = 0;
  t.rec_count_n = 0;
}

void Guest::record_line(Task& t, std::uint64_t key, std::uint32_t version) {
  t.rec_hit_ns += sim_.coherence().l1_hit();
  for (int i = 0; i < t.rec_lines; ++i)
    if (t.rec_keys[static_cast<std::size_t>(i)] == key) return;
  if (t.rec_lines == kMaxWatchedLines) {
    t.rec_overflow = true;
    return;
  }
  t.rec_keys[static_cast<std::size_t>(t.rec_lines)] = key;
  t.rec_versions[static_cast<std::size_t>(t.rec_lines)] = version;
  ++t.rec_lines;
}

void Guest::unwatch_all(Task& t) {
  for (int i = 0; i < t.rec_lines; ++i) Coherence::unwatch(t.watch[static_cast<std::size_t>(i)]);
}

void Guest::watcher_fired(Task& t) {
  t.watch_fired = true;
  unwatch_all(t);
  Vcpu& v = *t.vcpu;
  if (v.curr != &t || !v.running || v.halted) return;
  // The spinner notices the change when the PAUSE in progress completes (or when the work
  // it still had pending is done): wake it then, and it re-reads at once.
  Time delay = 0;
  if (t.spin_per_iter > 0) {
    const Time spun = v.runtime(sim_.now()) - t.spin_rt0 - t.spin_pre;
    if (spun < 0) {
      delay = -spun;
    } else {
      const double k = std::ceil(static_cast<double>(spun) / t.spin_per_iter);
      delay = static_cast<Time>(std::ceil(k * t.spin_per_iter)) - spun;
    }
  }
  sim_.schedule_resume(v, sim_.now() + std::max<Time>(0, delay));
}

std::uint64_t Guest::spin_sleep(Task& t, Sym site, std::uint64_t n, double per_iter,
                                double call_ns_per_iter) {
  if (t.rec_overflow) n = std::min<std::uint64_t>(n, 1);
  if (n == 0) return 0;
  // Watch every line the condition read. If one already changed (the check yielded in
  // between), do not sleep: re-evaluate at once.
  Coherence& coh = sim_.coherence();
  t.watch_fired = false;
  for (int i = 0; i < t.rec_lines; ++i) {
    const auto k = static_cast<std::size_t>(i);
    Line* l = coh.find(t.rec_keys[k]);
    if (l == nullptr || l->version != t.rec_versions[k]) {
      for (int j = 0; j < i; ++j) Coherence::unwatch(t.watch[static_cast<std::size_t>(j)]);
      return 0;
    }
    Coherence::watch(*l, t.watch[k]);
  }
  // Fold the pending local time in, so that nothing yields between watching and sleeping.
  const auto pre = static_cast<Time>(t.pending_ns);
  t.pending_ns -= static_cast<double>(pre);
  const double span = std::min(1e15, static_cast<double>(n) * per_iter);
  const auto max_ns = static_cast<Time>(std::ceil(span));
  // The hypervisor watches PAUSE loops (pause-loop exiting).
  sim_.platform().spin_begin(*t.vcpu);
  t.spin_rt0 = t.vcpu->runtime(sim_.now());
  t.spin_pre = pre;
  t.spin_per_iter = per_iter;
  Time spun = wait(t, pre + max_ns, true) - pre;
  t.spin_per_iter = 0;
  sim_.platform().spin_end(*t.vcpu);
  unwatch_all(t);
  if (spun < 0) {
    t.pending_ns += static_cast<double>(-spun);
    spun = 0;
  }
  std::uint64_t done = 0;
  double accounted = static_cast<double>(spun);
  if (!t.watch_fired && spun >= max_ns) {
    done = span < 1e15 ? n : static_cast<std::uint64_t>(static_cast<double>(spun) / per_iter);
  } else {
    // Woken by a write (at the end of a PAUSE, see watcher_fired) or by an interrupt: the
    // iteration in progress completes before the condition is read again.
    // (Wake-ups are rounded up to whole ns: allow that nanosecond.)
    done = static_cast<std::uint64_t>(std::ceil(static_cast<double>(spun - 1) / per_iter));
    done = std::min(std::max<std::uint64_t>(done, 1), n);
    const double rest = static_cast<double>(done) * per_iter - static_cast<double>(spun);
    if (rest > 0) {
      t.pending_ns += rest;
      accounted += rest;
    }
  }
  const double calls = std::min(accounted, static_cast<double>(done) * call_ns_per_iter);
  profile_.add(site, accounted - calls);
  profile_.add(Sym::vcpu_is_preempted, calls);
  for (int i = 0; i < t.rec_count_n; ++i) {
    const auto& [e, k] = t.rec_counts[static_cast<std::size_t>(i)];
    counters_[e] += k * done;
  }
  return done;
}

// ---- Scheduler ----------------------------------------------------------------------------------

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
    v.halted = true;
    v.idle_since = sim_.now();
    sim_.cancel_resume(v);
    trace_vcpu(v);
    sim_.platform().halt(v);
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
  Vcpu& tv = *target.vcpu;
  if (cfs()) {
    // place_entity() for a wake-up: sleeper credit of half the latency (GENTLE_FAIR_SLEEPERS),
    // never moving a task back in vruntime.
    target.vruntime = std::max(target.vruntime, tv.min_vruntime - kCfsLatencyNs / 2);
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

void Guest::pv_wait(Task& t, const SimAtomic<std::uint8_t>* ptr, std::uint8_t val) {
  Vcpu& v = *t.vcpu;
  if (v.kick_pending) {
    v.kick_pending = false;
    return;
  }
  if (ptr->load() != val) return;
  if (v.kick_pending) {  // arrived while the load waited
    v.kick_pending = false;
    return;
  }
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

// ---- Interrupts, ticks, kicks -------------------------------------------------------------------

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
  if (v.halted && v.halt_for_pv) {
    v.halted = false;
    sim_.watchdog().trace().add(sim_.now(), TraceKind::pv_wake_kick, v.index);
    if (v.running) sim_.schedule_resume(v, sim_.now());
  } else {
    v.kick_pending = true;  // pv_unhalted: the next pv_wait returns at once
  }
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
