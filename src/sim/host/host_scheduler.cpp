// SPDX-License-Identifier: GPL-2.0-only
#include "sim/host/host_scheduler.hpp"

#include <algorithm>
#include <limits>

#include "sim/invariant.hpp"

namespace pvlock::sim::host {

HostScheduler::HostScheduler(const scenario::HostSpec& spec, Topology topo, Listener& listener)
    : spec_(spec), topo_(std::move(topo)), listener_(listener) {
  rqs_.resize(static_cast<std::size_t>(topo_.pcpus));
  // avg_idle starts at twice the migration cost (init_sched: 2 * sysctl_sched_migration_cost).
  for (RunQueue& q : rqs_) q.avg_idle = 2 * spec_.sched_migration_cost_ns;
  if (topo_.socket_of.size() != static_cast<std::size_t>(topo_.pcpus))
    topo_.socket_of.assign(static_cast<std::size_t>(topo_.pcpus), 0);
  if (topo_.core_of.size() != static_cast<std::size_t>(topo_.pcpus)) {
    topo_.core_of.resize(static_cast<std::size_t>(topo_.pcpus));
    for (int p = 0; p < topo_.pcpus; ++p) topo_.core_of[static_cast<std::size_t>(p)] = p;
  }
  weight_.resize(static_cast<std::size_t>(topo_.pcpus));
  for (int p = 0; p < topo_.pcpus; ++p)
    for (int l = 0; l < kLevels; ++l) {
      int n = 0;
      for (int q = 0; q < topo_.pcpus; ++q) n += in_domain(p, q, l) ? 1 : 0;
      weight_[static_cast<std::size_t>(p)][static_cast<std::size_t>(l)] = n;
    }
  // The pCPUs' balancing is out of phase (their intervals drift with load): pCPU p first
  // balances each domain p/pcpus of an idle interval after the start.
  last_balance_.resize(static_cast<std::size_t>(topo_.pcpus));
  for (int p = 0; p < topo_.pcpus; ++p)
    for (int l = 0; l < kLevels; ++l)
      last_balance_[static_cast<std::size_t>(p)][static_cast<std::size_t>(l)] =
          -domain_weight(p, l) * spec_.balance_interval_per_cpu_ns * p / topo_.pcpus;
}

bool HostScheduler::in_domain(int a, int b, int level) const {
  switch (level) {
    case kSmt:
      return topo_.core_of[static_cast<std::size_t>(a)] ==
             topo_.core_of[static_cast<std::size_t>(b)];
    case kSocket:
      return shares_cache(a, b);
    default:
      return true;
  }
}

ThreadId HostScheduler::add_thread(int home_pcpu, bool pinned) {
  Thread th;
  th.pcpu = home_pcpu;
  th.pinned = pinned;
  th.state = State::queued;
  threads_.push_back(th);
  const ThreadId id = static_cast<ThreadId>(threads_.size() - 1);
  RunQueue& q = rq(home_pcpu);
  q.queued.reserve(threads_.size());
  threads_.back().vruntime = q.min_vruntime;
  threads_.back().deadline = q.min_vruntime + spec_.sched_base_slice_ns;
  q.queued.push_back(id);
  return id;
}

ThreadId HostScheduler::add_sleeping_thread(int home_pcpu, bool pinned) {
  Thread th;
  th.pcpu = home_pcpu;
  th.pinned = pinned;
  th.state = State::blocked;
  th.vruntime = rq(home_pcpu).min_vruntime;
  threads_.push_back(th);
  return static_cast<ThreadId>(threads_.size() - 1);
}

void HostScheduler::start(std::int64_t now, std::uint64_t phase_seed) {
  cause_ = Cause::start;
  // Every run queue may later hold every thread: reserve once, never allocate again.
  for (RunQueue& q : rqs_) q.queued.reserve(threads_.size());
  std::uint64_t state = phase_seed;
  for (int p = 0; p < topo_.pcpus; ++p) {
    schedule(p, now);
    RunQueue& q = rq(p);
    if (phase_seed == 0 || q.curr == kIdle) continue;
    // splitmix64 step: a deterministic phase per pCPU.
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const std::int64_t slice = sched_slice(q);
    const auto phase = static_cast<std::int64_t>(z % static_cast<std::uint64_t>(slice));
    Thread& c = threads_[idx(q.curr)];
    c.prev_sum_exec -= phase;  // as if it had already run `phase` of its slice
    if (spec_.scheduler == scenario::HostSpec::Scheduler::eevdf) c.deadline -= phase;
    // The others waiting here have run for a while too: spread their vruntime.
    for (ThreadId t : q.queued) threads_[idx(t)].vruntime -= phase / 2;
  }
}

int HostScheduler::nr_running(int pcpu) const {
  const RunQueue& q = rq(pcpu);
  return static_cast<int>(q.queued.size()) + (q.curr != kIdle ? 1 : 0);
}

void HostScheduler::update_curr(int pcpu, std::int64_t now) {
  RunQueue& q = rq(pcpu);
  if (q.curr == kIdle) return;
  Thread& th = threads_[idx(q.curr)];
  const std::int64_t delta = now - th.exec_start;
  if (delta <= 0) return;
  th.exec_start = now;
  th.sum_exec += delta;
  th.vruntime += delta;  // nice 0: virtual time advances at wall-clock rate
  update_min_vruntime(q);
}

void HostScheduler::update_min_vruntime(RunQueue& q) {
  std::int64_t v = std::numeric_limits<std::int64_t>::max();
  if (q.curr != kIdle) v = threads_[idx(q.curr)].vruntime;
  for (ThreadId t : q.queued) v = std::min(v, threads_[idx(t)].vruntime);
  if (v != std::numeric_limits<std::int64_t>::max()) q.min_vruntime = std::max(q.min_vruntime, v);
}

std::int64_t HostScheduler::sched_slice(const RunQueue& q) const {
  if (spec_.scheduler == scenario::HostSpec::Scheduler::eevdf) return spec_.sched_base_slice_ns;
  // __sched_period(): the latency target, stretched once more than sched_nr_latency
  // (= latency / min_granularity) threads share the CPU; equal weights split it evenly.
  const std::int64_t nr = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(q.queued.size()) + (q.curr != kIdle ? 1 : 0));
  const std::int64_t nr_latency = std::max<std::int64_t>(
      1, spec_.sched_latency_ns / std::max<std::int64_t>(1, spec_.sched_min_granularity_ns));
  const std::int64_t period =
      nr > nr_latency ? nr * spec_.sched_min_granularity_ns : spec_.sched_latency_ns;
  return period / nr;
}

std::int64_t HostScheduler::avg_vruntime(const RunQueue& q) const {
  std::int64_t sum = 0;
  std::int64_t n = 0;
  if (q.curr != kIdle) sum += threads_[idx(q.curr)].vruntime - q.min_vruntime, ++n;
  for (ThreadId t : q.queued) sum += threads_[idx(t)].vruntime - q.min_vruntime, ++n;
  return n == 0 ? q.min_vruntime : q.min_vruntime + sum / n;
}

void HostScheduler::place_on_wake(Thread& th, const RunQueue& q) {
  if (spec_.scheduler == scenario::HostSpec::Scheduler::eevdf) {
    // Lag is forgotten over a sleep of this length (simplification of place_entity's lag
    // scaling): the woken thread starts at the average, with a fresh deadline.
    th.vruntime = avg_vruntime(q);
    th.deadline = th.vruntime + spec_.sched_base_slice_ns;
    return;
  }
  // place_entity(): a sleeper gets credit of up to half the latency target
  // (GENTLE_FAIR_SLEEPERS), but never goes back in time.
  th.vruntime = std::max(th.vruntime, q.min_vruntime - spec_.sched_latency_ns / 2);
}

void HostScheduler::enqueue(int pcpu, ThreadId t) {
  RunQueue& q = rq(pcpu);
  PVLOCK_INVARIANT(q.curr != t && std::find(q.queued.begin(), q.queued.end(), t) == q.queued.end(),
                   "a host thread joins a run queue once, and not while it runs there");
  threads_[idx(t)].state = State::queued;
  threads_[idx(t)].pcpu = pcpu;
  q.queued.push_back(t);
}

void HostScheduler::dequeue(int pcpu, ThreadId t) {
  RunQueue& q = rq(pcpu);
  auto it = std::find(q.queued.begin(), q.queued.end(), t);
  if (it != q.queued.end()) q.queued.erase(it);
  if (q.next_buddy == t) q.next_buddy = kIdle;
  if (q.skip_buddy == t) q.skip_buddy = kIdle;
}

int HostScheduler::wakeup_preempt_entity(ThreadId curr, ThreadId se) const {
  const std::int64_t vdiff = threads_[idx(curr)].vruntime - threads_[idx(se)].vruntime;
  if (vdiff <= 0) return -1;
  return vdiff > spec_.sched_wakeup_granularity_ns ? 1 : 0;
}

ThreadId HostScheduler::pick_next(int pcpu) {
  RunQueue& q = rq(pcpu);
  if (q.queued.empty()) return kIdle;
  auto lower = [&](ThreadId a, ThreadId b) {
    const Thread& x = threads_[idx(a)];
    const Thread& y = threads_[idx(b)];
    return x.vruntime != y.vruntime ? x.vruntime < y.vruntime : a < b;
  };
  ThreadId se = kIdle;
  if (spec_.scheduler == scenario::HostSpec::Scheduler::eevdf) {
    // pick_next_entity(): the next buddy if it is eligible, but only under
    // sched_feat(NEXT_BUDDY), off by default (v6.6-v6.11; see HostSpec::next_buddy); else
    // pick_eevdf(): among eligible threads (vruntime <= average), earliest deadline.
    const std::int64_t avg = avg_vruntime(q);
    const bool buddy =
        spec_.next_buddy && q.next_buddy != kIdle && threads_[idx(q.next_buddy)].vruntime <= avg;
    if (buddy) se = q.next_buddy;
    for (ThreadId t : q.queued) {
      if (buddy) break;
      const Thread& th = threads_[idx(t)];
      if (th.vruntime > avg) continue;
      if (se == kIdle || th.deadline < threads_[idx(se)].deadline ||
          (th.deadline == threads_[idx(se)].deadline && t < se))
        se = t;
    }
    if (se == kIdle) se = *std::min_element(q.queued.begin(), q.queued.end(), lower);
  } else {
    // pick_next_entity(): leftmost, unless it is the skip buddy (a yielder) and the second
    // is close enough, or the next buddy (a yield_to target) is close enough.
    const ThreadId left = *std::min_element(q.queued.begin(), q.queued.end(), lower);
    se = left;
    if (q.skip_buddy == left) {
      ThreadId second = kIdle;
      for (ThreadId t : q.queued)
        if (t != left && (second == kIdle || lower(t, second))) second = t;
      if (second != kIdle && wakeup_preempt_entity(second, left) < 1) se = second;
    }
    if (q.next_buddy != kIdle && q.next_buddy != se &&
        std::find(q.queued.begin(), q.queued.end(), q.next_buddy) != q.queued.end() &&
        wakeup_preempt_entity(q.next_buddy, left) < 1)
      se = q.next_buddy;
  }
  // clear_buddies(): only the picked thread stops being a buddy. A yield_to() target that was
  // too far ahead to be picked stays the next buddy, and a yielder passed over stays the skip
  // buddy, for the picks that follow (dequeue() clears them).
  dequeue(pcpu, se);
  return se;
}

void HostScheduler::schedule(int pcpu, std::int64_t now) {
  RunQueue& q = rq(pcpu);
  update_curr(pcpu, now);
  const ThreadId prev = q.curr;
  if (prev != kIdle && threads_[idx(prev)].nonpreemptible &&
      threads_[idx(prev)].state == State::running)
    return;
  bool prev_runnable = false;
  if (prev != kIdle) {
    Thread& p = threads_[idx(prev)];
    if (p.state == State::running) {
      prev_runnable = true;
      p.state = State::queued;
      q.queued.push_back(prev);
    }
  }
  q.curr = kIdle;
  ThreadId next = pick_next(pcpu);
  if (next == kIdle) {
    // newidle_balance(): stamp the start of the idle period; pull only if this pCPU's idle
    // periods have lately been long enough to pay for a migration (avg_idle).
    if (prev != kIdle) q.idle_stamp = now;
    if (q.avg_idle >= spec_.sched_migration_cost_ns && pull_one(pcpu, now, true))
      next = pick_next(pcpu);
  }
  if (next != kIdle) {
    q.idle_stamp = -1;
    Thread& n = threads_[idx(next)];
    n.state = State::running;
    n.exec_start = now;
    // set_next_entity() starts a new slice only for a thread that was not running: when
    // schedule() picks the running thread again, pick_next_task_fair() skips the put/set pair
    // (its fast path, CONFIG_FAIR_GROUP_SCHED as distribution kernels build it), so a thread
    // re-picked at a tick, or after a yield or a buddy that did not win, keeps its slice count.
    if (next != prev) n.prev_sum_exec = n.sum_exec;
    q.curr = next;
  }
  check_rq(pcpu);
  if (next != prev) {
    ++switches_;
    listener_.on_switch(pcpu, prev, next, prev_runnable, now);
  }
}

void HostScheduler::check_rq(int pcpu) const {
  const RunQueue& q = rqs_[static_cast<std::size_t>(pcpu)];
  if (q.curr != kIdle) {
    const Thread& c = threads_[idx(q.curr)];
    PVLOCK_INVARIANT(c.state == State::running && c.pcpu == pcpu,
                     "a pCPU's current thread is running, on that pCPU");
  }
  // The queue is short (scanned linearly by pick_next() already).
  for (const ThreadId t : q.queued) {
    const Thread& th = threads_[idx(t)];
    PVLOCK_INVARIANT(t != q.curr && th.state == State::queued && th.pcpu == pcpu,
                     "a queued host thread waits on its own pCPU's queue, not running");
  }
}

bool HostScheduler::should_preempt_on_wake(const RunQueue& q, ThreadId woken) const {
  if (q.curr == kIdle) return true;
  if (spec_.scheduler == scenario::HostSpec::Scheduler::eevdf) {
    // RUN_TO_PARITY: the running thread keeps the CPU for the slice it was picked with.
    const Thread& c = threads_[idx(q.curr)];
    const Thread& w = threads_[idx(woken)];
    return c.sum_exec - c.prev_sum_exec >= spec_.sched_base_slice_ns &&
           w.vruntime <= avg_vruntime(q) && w.deadline < c.deadline;
  }
  // check_preempt_wakeup(): preempt only past the wakeup granularity.
  return wakeup_preempt_entity(q.curr, woken) == 1;
}

void HostScheduler::mark_wakeup_preemption(int pcpu, ThreadId woken) {
  // check_preempt_wakeup(): a wake-up that preempts the running thread also makes the woken
  // thread the next buddy ("bias pick_next to the entity triggering this preemption"), so
  // the schedule() that follows runs it even when another waiter is further left (within
  // the wakeup granularity). This also replaces an older yield_to() mark. EEVDF (v6.6+) sets
  // a buddy at a wake-up only under NEXT_BUDDY (wake()).
  if (spec_.scheduler == scenario::HostSpec::Scheduler::cfs) rq(pcpu).next_buddy = woken;
}

int HostScheduler::select_pcpu_on_wake(const Thread& th) const {
  if (th.pinned) return th.pcpu;
  const int prev = th.pcpu;
  auto idle = [&](int p) { return rq(p).curr == kIdle && rq(p).queued.empty(); };
  if (idle(prev)) return prev;
  // select_idle_sibling(): an idle pCPU sharing the last-level cache (the socket).
  const int sock = topo_.socket_of[static_cast<std::size_t>(prev)];
  for (int i = 1; i < topo_.pcpus; ++i) {
    const int p = (prev + i) % topo_.pcpus;
    if (topo_.socket_of[static_cast<std::size_t>(p)] == sock && idle(p)) return p;
  }
  return prev;
}

void HostScheduler::migrate(ThreadId t, int from, int to) {
  Thread& th = threads_[idx(t)];
  // vruntime is relative to its run queue's min_vruntime (migrate_task_rq_fair).
  th.vruntime += rq(to).min_vruntime - rq(from).min_vruntime;
  th.deadline += rq(to).min_vruntime - rq(from).min_vruntime;
  th.pcpu = to;
  ++migrations_;
}

HostScheduler::WakeOutcome HostScheduler::wake(ThreadId t, std::int64_t now) {
  cause_ = Cause::wake;
  Thread& th = threads_[idx(t)];
  if (th.state != State::blocked) return WakeOutcome::not_blocked;
  const int target = select_pcpu_on_wake(th);
  if (target != th.pcpu) migrate(t, th.pcpu, target);
  update_curr(target, now);
  place_on_wake(th, rq(target));
  const bool idle = rq(target).curr == kIdle;
  if (RunQueue& tq = rq(target); idle && tq.idle_stamp >= 0) {
    // ttwu_do_wakeup(): fold the idle period that ends into avg_idle (update_avg, 1/8),
    // capped at twice the cost of a newidle balance (max_idle_balance_cost, here the
    // migration cost it starts from).
    tq.avg_idle += (now - tq.idle_stamp - tq.avg_idle) / 8;
    tq.avg_idle = std::min(tq.avg_idle, 2 * spec_.sched_migration_cost_ns);
    tq.idle_stamp = -1;
  }
  enqueue(target, t);
  // check_preempt_wakeup_fair() (EEVDF): under NEXT_BUDDY every wake-up onto a busy pCPU
  // marks the woken thread, preempting or not.
  if (spec_.scheduler == scenario::HostSpec::Scheduler::eevdf && spec_.next_buddy && !idle)
    rq(target).next_buddy = t;
  if (poller_gives_way(target, now))
    return th.state == State::running ? WakeOutcome::preempts : WakeOutcome::queued;
  if (!should_preempt_on_wake(rq(target), t)) return WakeOutcome::queued;
  if (!idle) mark_wakeup_preemption(target, t);
  schedule(target, now);
  // The running thread may not have been preempted after all (a non-preemptible one, or a
  // pick that went to another waiter): then the woken thread waits.
  if (th.state != State::running) return WakeOutcome::queued;
  return idle ? WakeOutcome::onto_idle : WakeOutcome::preempts;
}

bool HostScheduler::poller_gives_way(int pcpu, std::int64_t now) {
  const ThreadId c = rq(pcpu).curr;
  if (c == kIdle) return false;
  const Thread& th = threads_[idx(c)];
  if (!th.polling || th.state != State::running) return false;
  // kvm_vcpu_block(): the poll loop's single_task_running() test fails, the thread leaves
  // the loop and schedule()s with TASK_INTERRUPTIBLE set -- a block, not a preemption, so
  // check_preempt_wakeup()'s verdict and buddy do not matter.
  const Cause why = cause_;
  block(c, now);
  cause_ = why;
  return true;
}

void HostScheduler::block(ThreadId t, std::int64_t now) {
  cause_ = Cause::block;
  Thread& th = threads_[idx(t)];
  if (th.state != State::running) return;
  PVLOCK_INVARIANT(rq(th.pcpu).curr == t, "a running host thread is its pCPU's current");
  update_curr(th.pcpu, now);
  th.state = State::blocked;
  th.polling = false;
  // dequeue_entity() -> clear_buddies(): a thread that sleeps is nobody's buddy.
  RunQueue& q = rq(th.pcpu);
  if (q.next_buddy == t) q.next_buddy = kIdle;
  if (q.skip_buddy == t) q.skip_buddy = kIdle;
  schedule(th.pcpu, now);
}

void HostScheduler::tick(int pcpu, std::int64_t now) {
  cause_ = Cause::tick;
  RunQueue& q = rq(pcpu);
  if (q.curr == kIdle) return;  // NO_HZ idle: an idle pCPU takes no tick
  update_curr(pcpu, now);
  if (q.queued.empty()) return;
  Thread& c = threads_[idx(q.curr)];
  bool resched = false;
  if (spec_.scheduler == scenario::HostSpec::Scheduler::eevdf) {
    // update_deadline(): a thread that used up its slice gets a new deadline and yields
    // the CPU to whoever is now the earliest eligible deadline.
    if (c.vruntime >= c.deadline) {
      c.deadline = c.vruntime + spec_.sched_base_slice_ns;
      resched = true;
    }
  } else {
    // check_preempt_tick(): slice used up, or far ahead of the leftmost waiter.
    const std::int64_t ideal = sched_slice(q);
    const std::int64_t ran = c.sum_exec - c.prev_sum_exec;
    if (ran > ideal) {
      resched = true;
      // ... and clear_buddies(): a thread whose slice is up is nobody's buddy any more.
      if (q.next_buddy == q.curr) q.next_buddy = kIdle;
      if (q.skip_buddy == q.curr) q.skip_buddy = kIdle;
    } else if (ran >= spec_.sched_min_granularity_ns) {
      std::int64_t left = std::numeric_limits<std::int64_t>::max();
      for (ThreadId t : q.queued) left = std::min(left, threads_[idx(t)].vruntime);
      if (c.vruntime - left > ideal) resched = true;
    }
  }
  if (resched) schedule(pcpu, now);
}

void HostScheduler::yield(ThreadId t, std::int64_t now) {
  cause_ = Cause::yield;
  Thread& th = threads_[idx(t)];
  if (th.state != State::running) return;
  update_curr(th.pcpu, now);
  RunQueue& q = rq(th.pcpu);
  if (spec_.scheduler == scenario::HostSpec::Scheduler::eevdf) {
    // yield_task_fair() (v6.6): nothing when the run queue holds only us; otherwise
    // clear_buddies() and give up the rest of the slice (the deadline moves a slice out).
    if (q.queued.empty()) return;
    if (q.next_buddy == t) q.next_buddy = kIdle;
    th.deadline += spec_.sched_base_slice_ns;
  } else {
    // yield_task_fair(): nothing to yield to when we are alone (and then no skip buddy is
    // left behind for later picks); otherwise clear_buddies() and become the skip buddy.
    if (q.queued.empty()) return;
    if (q.next_buddy == t) q.next_buddy = kIdle;
    q.skip_buddy = t;
  }
  schedule(th.pcpu, now);
}

bool HostScheduler::yield_to(ThreadId from, ThreadId to, std::int64_t now) {
  cause_ = Cause::yield;
  Thread& target = threads_[idx(to)];
  if (target.state != State::queued || threads_[idx(from)].state != State::running) return false;
  const int from_pcpu = threads_[idx(from)].pcpu;
  const int to_pcpu = target.pcpu;
  // yield_to_task_fair(): make the target the next buddy where it waits, and the yielder
  // the skip buddy where it runs; the target's CPU reschedules if it is another one.
  rq(to_pcpu).next_buddy = to;
  yield(from, now);
  if (to_pcpu != from_pcpu && threads_[idx(to)].state == State::queued) schedule(to_pcpu, now);
  return true;
}

bool HostScheduler::pull_one(int pcpu, std::int64_t now, bool newidle, int level, int min_gap) {
  auto movable_thread = [&](ThreadId t) {
    const Thread& th = threads_[idx(t)];
    return !th.pinned && !(newidle && cache_hot(th, now));
  };
  const int sock = topo_.socket_of[static_cast<std::size_t>(pcpu)];
  int best = -1;
  std::size_t best_queued = 0;
  bool best_same_socket = false;
  for (int i = 1; i < topo_.pcpus; ++i) {
    const int p = (pcpu + i) % topo_.pcpus;
    if (!in_domain(pcpu, p, level)) continue;
    if (min_gap > 0 && nr_running(p) < nr_running(pcpu) + min_gap) continue;
    const RunQueue& q = rq(p);
    bool movable = false;
    for (ThreadId t : q.queued) movable = movable || movable_thread(t);
    if (!movable) continue;
    const bool same = topo_.socket_of[static_cast<std::size_t>(p)] == sock;
    // Prefer the busiest queue of our own socket (the first sched domain), then any.
    if (best == -1 || (same && !best_same_socket) ||
        (same == best_same_socket && q.queued.size() > best_queued)) {
      best = p;
      best_queued = q.queued.size();
      best_same_socket = same;
    }
  }
  if (best == -1) return false;
  // detach_tasks() walks from the least recently enqueued task.
  for (ThreadId t : rq(best).queued) {
    if (!movable_thread(t)) continue;
    dequeue(best, t);
    migrate(t, best, pcpu);
    enqueue(pcpu, t);
    return true;
  }
  return false;
}

void HostScheduler::balance(std::int64_t now) {
  cause_ = Cause::balance;
  for (int p = 0; p < topo_.pcpus; ++p) {
    auto& last = last_balance_[static_cast<std::size_t>(p)];
    for (int l = 0; l < kLevels; ++l) {
      // A domain that spans no more than the one below it does not exist (no SMT, one
      // socket).
      const int weight = domain_weight(p, l);
      if (weight <= 1 || (l > 0 && weight == domain_weight(p, l - 1))) continue;
      const bool idle = rq(p).curr == kIdle;
      std::int64_t interval = weight * spec_.balance_interval_per_cpu_ns;
      if (!idle) interval *= spec_.balance_busy_factor;
      auto& at = last[static_cast<std::size_t>(l)];
      if (now - at < interval) continue;
      at = now;
      // load_balance(): an idle pCPU pulls the busiest domain member's waiting thread; a busy
      // one evens out run queues that differ by two or more.
      if (!pull_one(p, now, false, l, idle ? 0 : 2)) continue;
      if (idle) {
        schedule(p, now);
      } else {
        // attach_task() -> check_preempt_curr(), as for a wake-up.
        const ThreadId moved = rq(p).queued.back();
        if (poller_gives_way(p, now)) continue;
        if (should_preempt_on_wake(rq(p), moved)) {
          mark_wakeup_preemption(p, moved);
          schedule(p, now);
        }
      }
    }
  }
}

}  // namespace pvlock::sim::host
