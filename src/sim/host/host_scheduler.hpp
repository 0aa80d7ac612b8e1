// SPDX-License-Identifier: GPL-2.0-only
// The host's CPU scheduler, as a pure state machine over host threads (vCPU threads and
// other host load), one run queue per pCPU.
//
// Default: CFS as the seeds' hosts ran it (kernel/sched/fair.c, v4.19-v5.4, >= 8 CPUs):
// vruntime fairness (all host threads at nice 0, so vruntime advances at wall rate), sched_slice =
// period x weight share with period = 24 ms (or nr x 3 ms beyond 8 runnable), tick preemption
// (check_preempt_tick), wakeup preemption with a 4 ms granularity (wakeup_preempt_entity), sleeper
// placement at min_vruntime - 12 ms (GENTLE_FAIR_SLEEPERS), next/skip buddies for yield_to
// (yield_to_task_fair; a mark lasts until its thread is picked, sleeps or ends its slice, as
// clear_buddies() has it) and a next buddy for a wake-up that preempts (check_preempt_wakeup),
// slices that continue when schedule() re-picks the running thread, wake placement on an idle pCPU
// of the same socket first (select_idle_sibling), idle pulling (newidle_balance, gated by the
// pCPU's average idle period and sparing cache-hot threads) and periodic balancing per sched domain
// (SMT, socket, machine) at the kernel's intervals, with idle pCPUs taking no tick (NO_HZ). EEVDF
// (v6.6+) is an option: eligibility by average vruntime, earliest virtual deadline first, a 3 ms
// base slice.
//
// The scheduler decides; it does not keep time. The simulator calls it at event times with
// `now`, and it reports every context switch to a Listener, which charges switch costs and
// starts or stops the vCPU. No allocation after construction.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "scenario/scenario.hpp"

namespace pvlock::sim::host {

using ThreadId = int;
inline constexpr ThreadId kIdle = -1;

class HostScheduler {
 public:
  // What a wake() did with the woken thread (the host side of a vCPU's kick-to-run latency).
  enum class WakeOutcome : std::uint8_t {
    not_blocked,  // it was already runnable: nothing to do
    onto_idle,    // placed on an idle pCPU, runs at once
    preempts,     // check_preempt_wakeup(): it preempts the running thread at once, or a
                  // halt-poller running there gives way to it (set_polling)
    queued,       // it waits in a run queue for that pCPU's next schedule()
  };
  // Why a pCPU is rescheduling: the entry point that called schedule(). Valid during a
  // Listener::on_switch() callback.
  enum class Cause : std::uint8_t { start, wake, block, tick, yield, balance };

  struct Listener {
    virtual ~Listener() = default;
    // pCPU `pcpu` stops running `prev` (kIdle if it was idle) and runs `next` (kIdle = idle).
    // `prev_still_runnable` tells an involuntary preemption (the vCPU's "preempted" flag is
    // set then, kvm_sched_out) from a block.
    virtual void on_switch(int pcpu, ThreadId prev, ThreadId next, bool prev_still_runnable,
                           std::int64_t now) = 0;
  };

  struct Topology {
    int pcpus = 1;
    std::vector<int> socket_of;  // per pCPU
    std::vector<int> core_of;    // per pCPU (SMT siblings share one); empty: one per pCPU
  };

  HostScheduler(const scenario::HostSpec& spec, Topology topo, Listener& listener);

  // Adds a host thread, runnable, placed on `home_pcpu`. If `pinned`, it only ever runs
  // there (seed 002's core-bonded vCPUs); otherwise it floats.
  ThreadId add_thread(int home_pcpu, bool pinned);
  // Adds a host thread that starts blocked (it joins a run queue at its first wake()).
  ThreadId add_sleeping_thread(int home_pcpu, bool pinned);
  // Picks a thread for every pCPU; call once after adding threads. With a seed, each pCPU's
  // first slice is shortened by a random part of a slice: a host that has been running for a
  // while has its pCPUs' slice boundaries out of phase (identical, aligned slices would
  // gang-schedule VMs by accident and hide lock-waiter preemption).
  void start(std::int64_t now, std::uint64_t phase_seed = 0);

  // A blocked thread becomes runnable (a halted vCPU is kicked or gets an interrupt).
  WakeOutcome wake(ThreadId t, std::int64_t now);
  // The running thread blocks (HLT with nothing to poll): its pCPU switches away.
  void block(ThreadId t, std::int64_t now);
  // The scheduler tick on `pcpu` (HZ): slice expiry.
  void tick(int pcpu, std::int64_t now);
  // sched_yield() of the running thread `t`.
  void yield(ThreadId t, std::int64_t now);
  // yield_to(): running thread `from` gives its turn to `to` (kvm_vcpu_yield_to). Returns
  // false if `to` is not runnable-but-waiting (running or blocked), as the kernel does.
  bool yield_to(ThreadId from, ThreadId to, std::int64_t now);
  // While set, the running thread `t` is in host kernel code on its way to schedule() of its
  // own accord and is not preempted (a PREEMPT_VOLUNTARY host kernel): reschedules of its
  // pCPU wait until it blocks or the mark is cleared.
  void set_nonpreemptible(ThreadId t, bool on) { threads_[idx(t)].nonpreemptible = on; }
  // While set, the running thread `t` is in kvm_vcpu_block()'s halt-polling loop, which
  // goes on only while single_task_running(): when another thread joins its run queue (a
  // wake-up, a balancing pull) it leaves the loop and blocks itself, in host kernel code
  // that a PREEMPT_VOLUNTARY host does not preempt. on_switch() reports that as a block
  // (prev_still_runnable false). Cleared when the thread blocks.
  void set_polling(ThreadId t, bool on) { threads_[idx(t)].polling = on; }
  // Periodic load balancing (rebalance_domains), to be called at every tick: balances the
  // domains of each pCPU whose interval is due (see HostSpec::balance_interval_per_cpu_ns).
  void balance(std::int64_t now);

  bool running(ThreadId t) const { return threads_[idx(t)].state == State::running; }
  bool runnable(ThreadId t) const { return threads_[idx(t)].state != State::blocked; }
  int pcpu_of(ThreadId t) const { return threads_[idx(t)].pcpu; }
  ThreadId current(int pcpu) const { return rqs_[static_cast<std::size_t>(pcpu)].curr; }
  int nr_running(int pcpu) const;
  // single_task_running(): nothing else is runnable on that pCPU (gates halt polling and
  // kvm_sched_yield).
  bool single_task_running(int pcpu) const { return nr_running(pcpu) <= 1; }
  std::int64_t sum_exec_ns(ThreadId t) const { return threads_[idx(t)].sum_exec; }
  // CPU time used up to `now`, including the current run not yet accounted.
  std::int64_t exec_ns(ThreadId t, std::int64_t now) const {
    const Thread& th = threads_[idx(t)];
    return th.sum_exec + (th.state == State::running ? now - th.exec_start : 0);
  }
  int pcpus() const { return topo_.pcpus; }
  // cpus_share_cache(): same last-level cache, i.e. same socket in this model.
  bool shares_cache(int a, int b) const {
    return topo_.socket_of[static_cast<std::size_t>(a)] ==
           topo_.socket_of[static_cast<std::size_t>(b)];
  }
  std::uint64_t switches() const { return switches_; }
  std::uint64_t migrations() const { return migrations_; }
  // cfs_rq->next and cfs_rq->skip of a pCPU (kIdle when unset).
  ThreadId next_buddy(int pcpu) const { return rqs_[static_cast<std::size_t>(pcpu)].next_buddy; }
  ThreadId skip_buddy(int pcpu) const { return rqs_[static_cast<std::size_t>(pcpu)].skip_buddy; }
  // The entry point behind the schedule() now running (see Cause).
  Cause cause() const { return cause_; }

 private:
  enum class State : std::uint8_t { running, queued, blocked };
  // The run queue's invariants (sim/invariant.hpp), after every schedule().
  void check_rq(int pcpu) const;
  struct Thread {
    std::int64_t vruntime = 0;
    std::int64_t deadline = 0;       // EEVDF virtual deadline
    std::int64_t sum_exec = 0;       // total CPU time
    std::int64_t exec_start = 0;     // when it last started running
    std::int64_t prev_sum_exec = 0;  // sum_exec when it was last picked
    int pcpu = 0;
    bool pinned = false;
    bool nonpreemptible = false;
    bool polling = false;
    State state = State::queued;
  };
  struct RunQueue {
    ThreadId curr = kIdle;
    std::vector<ThreadId> queued;  // runnable, not running; small, scanned linearly
    std::int64_t min_vruntime = 0;
    ThreadId next_buddy = kIdle;
    ThreadId skip_buddy = kIdle;
    // newidle_balance()'s gate: when the pCPU last went idle (-1: not idle), and the
    // running average of its idle periods, sampled at wake-ups onto it (ttwu_do_wakeup).
    std::int64_t idle_stamp = -1;
    std::int64_t avg_idle = 0;
  };

  static std::size_t idx(ThreadId t) { return static_cast<std::size_t>(t); }
  RunQueue& rq(int pcpu) { return rqs_[static_cast<std::size_t>(pcpu)]; }
  const RunQueue& rq(int pcpu) const { return rqs_[static_cast<std::size_t>(pcpu)]; }

  void update_curr(int pcpu, std::int64_t now);
  void update_min_vruntime(RunQueue& q);
  std::int64_t sched_slice(const RunQueue& q) const;
  std::int64_t avg_vruntime(const RunQueue& q) const;
  void place_on_wake(Thread& th, const RunQueue& q);
  void enqueue(int pcpu, ThreadId t);
  void dequeue(int pcpu, ThreadId t);
  ThreadId pick_next(int pcpu);
  // Switch `pcpu` to the best candidate now (schedule()); `prev_runnable` as for on_switch.
  void schedule(int pcpu, std::int64_t now);
  bool should_preempt_on_wake(const RunQueue& q, ThreadId woken) const;
  // The next-buddy mark check_preempt_wakeup() leaves for the thread that preempts.
  void mark_wakeup_preemption(int pcpu, ThreadId woken);
  int select_pcpu_on_wake(const Thread& th) const;
  // A thread has just joined `pcpu`'s run queue: a halt-poller running there gives way
  // (see set_polling). True if it did, and the pCPU has rescheduled.
  bool poller_gives_way(int pcpu, std::int64_t now);
  void migrate(ThreadId t, int from, int to);
  // Sched domains of a pCPU, smallest first: its SMT siblings, its socket, the machine.
  enum Level : int { kSmt, kSocket, kMachine, kLevels };
  bool in_domain(int a, int b, int level) const;
  int domain_weight(int pcpu, int level) const {
    return weight_[static_cast<std::size_t>(pcpu)][static_cast<std::size_t>(level)];
  }
  // Pull one waiting thread to `pcpu` from the busiest run queue of its domain at `level`,
  // preferring its own socket; with `min_gap`, only from a queue at least that much longer
  // than its own (load_balance() evening out busy pCPUs). A newly idle pCPU
  // (newidle_balance) leaves cache-hot threads where they are.
  bool pull_one(int pcpu, std::int64_t now, bool newidle = false, int level = kMachine,
                int min_gap = 0);
  // task_hot(): ran within the migration cost.
  bool cache_hot(const Thread& th, std::int64_t now) const {
    return now - th.exec_start < spec_.sched_migration_cost_ns;
  }
  // CFS: does `se` have a vruntime advantage over `curr` beyond the wakeup granularity?
  int wakeup_preempt_entity(ThreadId curr, ThreadId se) const;

  scenario::HostSpec spec_;
  Topology topo_;
  Listener& listener_;
  std::vector<Thread> threads_;
  std::vector<RunQueue> rqs_;
  // rebalance_domains(): when each pCPU last balanced each of its domains.
  std::vector<std::array<std::int64_t, kLevels>> last_balance_;
  std::vector<std::array<int, kLevels>> weight_;  // CPUs in each domain of each pCPU
  std::uint64_t switches_ = 0;
  std::uint64_t migrations_ = 0;
  Cause cause_ = Cause::start;
};

}  // namespace pvlock::sim::host
