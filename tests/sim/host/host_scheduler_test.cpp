// SPDX-License-Identifier: GPL-2.0-only
// The host scheduler as a state machine: fairness, CFS slices, wakeup preemption, directed
// yield, pinning, EEVDF slices. Driven by a tick loop in simulated time.
#include "sim/host/host_scheduler.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace pvlock::sim::host {
namespace {

struct Recorder : HostScheduler::Listener {
  struct Switch {
    int pcpu;
    ThreadId prev, next;
    bool prev_runnable;
    std::int64_t now;
  };
  std::vector<Switch> switches;
  void on_switch(int pcpu, ThreadId prev, ThreadId next, bool prev_runnable,
                 std::int64_t now) override {
    switches.push_back({pcpu, prev, next, prev_runnable, now});
  }
};

HostScheduler::Topology topo(int pcpus, int sockets = 1) {
  HostScheduler::Topology t;
  t.pcpus = pcpus;
  for (int p = 0; p < pcpus; ++p) t.socket_of.push_back(p * sockets / pcpus);
  return t;
}

// Runs ticks (1 ms), each with its balance check, until `end`.
void run_until(HostScheduler& s, const scenario::HostSpec& spec, std::int64_t& now,
               std::int64_t end) {
  while (now < end) {
    now += spec.tick_ns;
    for (int p = 0; p < s.pcpus(); ++p) s.tick(p, now);
    s.balance(now);
  }
}

TEST(HostScheduler, BusyThreadsSharePcpusFairly) {
  // 2x over-commit: 32 always-runnable vCPU threads on 16 pCPUs each get half a pCPU.
  scenario::HostSpec spec;
  Recorder rec;
  HostScheduler s(spec, topo(16, 2), rec);
  for (int i = 0; i < 32; ++i) s.add_thread(i % 16, false);
  std::int64_t now = 0;
  s.start(now);
  run_until(s, spec, now, 2'000'000'000);
  for (ThreadId t = 0; t < 32; ++t)
    EXPECT_NEAR(static_cast<double>(s.sum_exec_ns(t)) / static_cast<double>(now), 0.5, 0.025)
        << "thread " << t;
}

TEST(HostScheduler, BalancingSpreadsThreadsStartedOnOnePcpu) {
  scenario::HostSpec spec;
  Recorder rec;
  HostScheduler s(spec, topo(4), rec);
  for (int i = 0; i < 8; ++i) s.add_thread(0, false);
  std::int64_t now = 0;
  s.start(now);
  run_until(s, spec, now, 2'000'000'000);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(s.nr_running(p), 2) << "pcpu " << p;
  for (ThreadId t = 0; t < 8; ++t)
    EXPECT_NEAR(static_cast<double>(s.sum_exec_ns(t)) / static_cast<double>(now), 0.5, 0.05);
}

TEST(HostScheduler, CfsGivesTwoThreadsTwelveMillisecondSlices) {
  // sched_latency 24 ms split between two runnable threads (docs/costs.md).
  scenario::HostSpec spec;
  Recorder rec;
  HostScheduler s(spec, topo(1), rec);
  s.add_thread(0, false);
  s.add_thread(0, false);
  std::int64_t now = 0;
  s.start(now);
  rec.switches.clear();
  run_until(s, spec, now, 1'200'000'000);
  ASSERT_GT(rec.switches.size(), 10u);
  for (std::size_t i = 1; i < rec.switches.size(); ++i) {
    const std::int64_t slice = rec.switches[i].now - rec.switches[i - 1].now;
    EXPECT_GE(slice, 12'000'000);
    EXPECT_LE(slice, 13'000'000);  // + one tick of detection latency
    EXPECT_TRUE(rec.switches[i].prev_runnable);
  }
}

TEST(HostScheduler, EevdfUsesBaseSlice) {
  scenario::HostSpec spec;
  spec.scheduler = scenario::HostSpec::Scheduler::eevdf;
  Recorder rec;
  HostScheduler s(spec, topo(1), rec);
  s.add_thread(0, false);
  s.add_thread(0, false);
  std::int64_t now = 0;
  s.start(now);
  rec.switches.clear();
  run_until(s, spec, now, 300'000'000);
  ASSERT_GT(rec.switches.size(), 50u);
  for (std::size_t i = 1; i < rec.switches.size(); ++i) {
    const std::int64_t slice = rec.switches[i].now - rec.switches[i - 1].now;
    EXPECT_GE(slice, 3'000'000);
    EXPECT_LE(slice, 4'000'000);
  }
}

// Two threads on one pCPU at time 0: the one picked first blocks (the sleeper), the other
// runs (the runner).
class SleeperAndRunnerOnOnePcpu : public ::testing::Test {
 protected:
  scenario::HostSpec spec;
  Recorder rec;
  HostScheduler s{spec, topo(1), rec};
  std::int64_t now = 0;
  ThreadId sleeper = kIdle;
  ThreadId runner = kIdle;
  void SetUp() override {
    s.add_thread(0, false);
    s.add_thread(0, false);
    s.start(now);
    sleeper = s.current(0);
    s.block(sleeper, now);
    runner = s.current(0);
    ASSERT_NE(runner, sleeper);
    ASSERT_NE(runner, kIdle);
  }
};

TEST_F(SleeperAndRunnerOnOnePcpu, LongSleeperPreemptsOnWake) {
  // A vCPU that halted for long wakes with min_vruntime - 12 ms: more than the 4 ms wakeup
  // granularity ahead of the running thread, so it preempts at once.
  run_until(s, spec, now, 100'000'000);
  EXPECT_EQ(s.current(0), runner);
  s.wake(sleeper, now);
  EXPECT_EQ(s.current(0), sleeper);
  EXPECT_TRUE(rec.switches.back().prev_runnable);  // the runner was preempted, not blocked
}

TEST(HostScheduler, WakeSaysWhereTheThreadWentAndScheduleSaysWhy) {
  struct CauseRecorder : HostScheduler::Listener {
    const HostScheduler* s = nullptr;
    std::vector<HostScheduler::Cause> causes;
    void on_switch(int, ThreadId, ThreadId, bool, std::int64_t) override {
      causes.push_back(s->cause());
    }
  };
  using WO = HostScheduler::WakeOutcome;
  using Cause = HostScheduler::Cause;
  scenario::HostSpec spec;
  CauseRecorder rec;
  HostScheduler s(spec, topo(2), rec);
  rec.s = &s;
  const ThreadId a = s.add_thread(0, true);
  const ThreadId b = s.add_thread(0, true);
  const ThreadId c = s.add_sleeping_thread(1, true);
  std::int64_t now = 0;
  s.start(now);
  EXPECT_EQ(rec.causes.back(), Cause::start);
  EXPECT_EQ(s.wake(c, now), WO::onto_idle);  // pCPU 1 is idle
  EXPECT_EQ(rec.causes.back(), Cause::wake);
  EXPECT_EQ(s.wake(c, now), WO::not_blocked);
  // On pCPU 0: block the runner, let the other run 1 ms, wake: below the granularity.
  const ThreadId first = s.current(0);
  const ThreadId second = first == a ? b : a;
  s.block(first, now);
  EXPECT_EQ(rec.causes.back(), Cause::block);
  now += 1'000'000;
  s.tick(0, now);
  EXPECT_EQ(s.wake(first, now), WO::queued);
  EXPECT_EQ(s.current(0), second);
  s.yield(second, now);  // its yield is what lets the woken thread run
  EXPECT_EQ(s.current(0), first);
  EXPECT_EQ(rec.causes.back(), Cause::yield);
  // A long sleep earns the full sleeper credit: the wake-up preempts.
  s.block(first, now);
  now += 100'000'000;
  for (std::int64_t t = now - 100'000'000; t <= now; t += spec.tick_ns) s.tick(0, t);
  EXPECT_EQ(s.wake(first, now), WO::preempts);
  EXPECT_EQ(s.current(0), first);
}

TEST_F(SleeperAndRunnerOnOnePcpu, ANonPreemptibleThreadIsNotPreemptedUntilItBlocks) {
  // A vCPU thread re-checking its halt in kvm_vcpu_block() is on its way to schedule(): a
  // wake-up that would preempt it (or a tick) waits until it blocks.
  run_until(s, spec, now, 100'000'000);  // a long sleep: the wake-up would preempt
  s.set_nonpreemptible(runner, true);
  EXPECT_EQ(s.wake(sleeper, now), HostScheduler::WakeOutcome::queued);
  EXPECT_EQ(s.current(0), runner);
  run_until(s, spec, now, 150'000'000);  // nor does its slice end it
  EXPECT_EQ(s.current(0), runner);
  s.block(runner, now);
  EXPECT_EQ(s.current(0), sleeper);
  s.set_nonpreemptible(runner, false);
}

TEST_F(SleeperAndRunnerOnOnePcpu, AHaltPollerGivesWayToAnyWakeUpByBlocking) {
  // kvm_vcpu_block() polls only while single_task_running(): a wake-up onto the poller's
  // pCPU ends the loop and the thread blocks itself -- even one that would not preempt
  // (1 ms of sleep, below the wakeup granularity) -- and it is not left runnable.
  now += 1'000'000;
  s.tick(0, now);
  s.set_polling(runner, true);
  rec.switches.clear();
  EXPECT_EQ(s.wake(sleeper, now), HostScheduler::WakeOutcome::preempts);
  EXPECT_EQ(s.current(0), sleeper);
  EXPECT_FALSE(s.runnable(runner));
  ASSERT_EQ(rec.switches.size(), 1u);
  EXPECT_EQ(rec.switches[0].prev, runner);
  EXPECT_FALSE(rec.switches[0].prev_runnable);  // a block, not a preemption
  EXPECT_EQ(s.cause(), HostScheduler::Cause::wake);
  // The mark ends with the block: woken again, the thread is an ordinary one.
  s.wake(runner, now);
  EXPECT_TRUE(s.runnable(runner));
  now += 1'000'000;
  s.block(sleeper, now);
  EXPECT_EQ(s.current(0), runner);
}

TEST_F(SleeperAndRunnerOnOnePcpu, AWakeUpPreemptsARunnerThatIsNotPolling) {
  // The same long sleep without the polling mark: check_preempt_wakeup() preempts and the
  // runner stays runnable (the case set_polling() must not be confused with).
  run_until(s, spec, now, 100'000'000);
  rec.switches.clear();
  EXPECT_EQ(s.wake(sleeper, now), HostScheduler::WakeOutcome::preempts);
  ASSERT_EQ(rec.switches.size(), 1u);
  EXPECT_TRUE(rec.switches[0].prev_runnable);
  EXPECT_TRUE(s.runnable(runner));
}

TEST_F(SleeperAndRunnerOnOnePcpu, ShortSleeperDoesNotPreempt) {
  now += 1'000'000;  // 1 ms: the runner is only 1 ms ahead, below the granularity
  s.tick(0, now);
  s.wake(sleeper, now);
  EXPECT_EQ(s.current(0), runner);
}

// Three threads on one pCPU, all at vruntime 0, started at time 0 (a runs first).
class ThreeThreadsOnOnePcpu : public ::testing::Test {
 protected:
  scenario::HostSpec spec;
  Recorder rec;
  HostScheduler s{spec, topo(1), rec};
  const ThreadId a = s.add_thread(0, false);
  const ThreadId b = s.add_thread(0, false);
  const ThreadId c = s.add_thread(0, false);
  std::int64_t now = 0;
  void SetUp() override { s.start(now); }
};

TEST_F(ThreeThreadsOnOnePcpu, YieldToRunsTheTargetNext) {
  const ThreadId cur = s.current(0);
  // Pick a waiting target that is not leftmost-by-id to make the buddy matter.
  const ThreadId target = cur == c ? b : c;
  EXPECT_TRUE(s.yield_to(cur, target, now));
  EXPECT_EQ(s.current(0), target);
  EXPECT_FALSE(s.yield_to(target, target, now));  // running targets are refused
}

TEST_F(ThreeThreadsOnOnePcpu, AYielderPassedOverStaysTheSkipBuddyUntilPicked) {
  // clear_buddies() clears only the picked thread's buddy marks: a yielder that was passed
  // over is skipped again at the next pick, not picked as the leftmost.
  ASSERT_EQ(s.current(0), a);  // all at vruntime 0: the lowest id first
  s.yield(a, now);             // a: skip buddy, b (second, as close) runs
  ASSERT_EQ(s.current(0), b);
  EXPECT_EQ(s.skip_buddy(0), a);
  now += 100'000;
  s.block(b, now);  // a (vruntime 0) is leftmost again, but still the skip buddy
  EXPECT_EQ(s.current(0), c);
  EXPECT_EQ(s.skip_buddy(0), a);
  now += 100'000;
  s.block(c, now);  // only a is left: picked, and no longer skipped
  EXPECT_EQ(s.current(0), a);
  EXPECT_EQ(s.skip_buddy(0), kIdle);
}

TEST_F(ThreeThreadsOnOnePcpu, AYieldToTargetTooFarAheadStaysTheNextBuddyUntilPicked) {
  s.block(a, now);  // b runs 10 ms alone while c waits: b ends 10 ms ahead of c
  ASSERT_EQ(s.current(0), b);
  now += 10'000'000;
  s.wake(a, now);  // a (vruntime 0) preempts b: more than the 4 ms granularity behind
  ASSERT_EQ(s.current(0), a);
  // yield_to(b): b is 10 ms ahead of the leftmost, beyond the wakeup granularity, so c runs;
  // b stays the next buddy for the picks to come.
  EXPECT_TRUE(s.yield_to(a, b, now));
  EXPECT_EQ(s.current(0), c);
  EXPECT_EQ(s.next_buddy(0), b);
  EXPECT_EQ(s.skip_buddy(0), a);
  // c sleeps: a is leftmost and the skip buddy, but b is too far ahead to run instead, so a
  // runs (and stops being skipped); b is still the next buddy.
  now += 100'000;
  s.block(c, now);
  EXPECT_EQ(s.current(0), a);
  EXPECT_EQ(s.skip_buddy(0), kIdle);
  EXPECT_EQ(s.next_buddy(0), b);
  // When b is picked at last, it stops being the next buddy.
  now += 100'000;
  s.block(a, now);
  EXPECT_EQ(s.current(0), b);
  EXPECT_EQ(s.next_buddy(0), kIdle);
}

TEST_F(ThreeThreadsOnOnePcpu, AWakeUpThatPreemptsRunsTheWokenThreadNotTheLeftmost) {
  // check_preempt_wakeup() makes the thread whose wake-up preempts the next buddy, so it runs
  // even though another waiter (c, never run) is further left, within the granularity.
  ASSERT_EQ(s.current(0), a);
  now += 2'000'000;
  s.tick(0, now);
  s.block(a, now);  // a sleeps at vruntime 2 ms; b runs, c (vruntime 0) waits
  ASSERT_EQ(s.current(0), b);
  run_until(s, spec, now, 12'000'000);  // b reaches vruntime 10 ms
  ASSERT_EQ(s.current(0), b);
  EXPECT_EQ(s.wake(a, now), HostScheduler::WakeOutcome::preempts);  // 8 ms behind b
  EXPECT_EQ(s.current(0), a);
  EXPECT_EQ(s.next_buddy(0), kIdle);  // picked: no longer a buddy
}

TEST_F(SleeperAndRunnerOnOnePcpu, AThreadPickedAgainKeepsItsSliceCount) {
  // pick_next_task_fair() re-picking the running thread does not call set_next_entity(), so
  // its slice goes on counting from when it was first picked.
  run_until(s, spec, now, 10'000'000);  // the runner alone for 10 ms
  s.wake(sleeper, now);  // the sleeper (vruntime 0) preempts it (10 ms): picked at 10 ms
  ASSERT_EQ(s.current(0), sleeper);
  run_until(s, spec, now, 15'000'000);
  // sched_yield() at vruntime 5 ms: the runner is 5 ms ahead, beyond the granularity, so the
  // sleeper is picked again -- with the slice it started at 10 ms, 12 ms long for two threads.
  s.yield(sleeper, now);
  ASSERT_EQ(s.current(0), sleeper);
  run_until(s, spec, now, 22'000'000);
  EXPECT_EQ(s.current(0), sleeper);
  run_until(s, spec, now, 23'000'000);  // ran 13 ms > 12: the tick hands over
  EXPECT_EQ(s.current(0), runner);
}

// EEVDF (v6.6+): yield_to_task_fair() marks the target cfs_rq->next, but pick_next_entity()
// runs that buddy only under sched_feat(NEXT_BUDDY), off by default; otherwise the pick is
// pick_eevdf()'s, the earliest eligible deadline.
// Three threads on one EEVDF pCPU at time 0; the first runs and yield_to()s the third.
// Returns {picked, second, third}.
std::array<ThreadId, 3> eevdf_yield_to_pick(bool next_buddy) {
  scenario::HostSpec spec;
  spec.scheduler = scenario::HostSpec::Scheduler::eevdf;
  spec.next_buddy = next_buddy;
  Recorder rec;
  HostScheduler s(spec, topo(1), rec);
  const ThreadId a = s.add_thread(0, false);
  const ThreadId b = s.add_thread(0, false);
  const ThreadId c = s.add_thread(0, false);
  s.start(0);
  EXPECT_EQ(s.current(0), a);  // all eligible, equal deadlines: the lowest id
  EXPECT_TRUE(s.yield_to(a, c, 0));
  return {s.current(0), b, c};
}

TEST(HostScheduler, EevdfYieldToRunsTheTargetFirstOnlyUnderNextBuddy) {
  // b and c have equal deadlines (b the lower id, picked on the tie); a's is a slice later.
  const auto off = eevdf_yield_to_pick(false);
  EXPECT_EQ(off[0], off[1]);
  const auto on = eevdf_yield_to_pick(true);
  EXPECT_EQ(on[0], on[2]);
}

TEST(HostScheduler, EevdfYieldWithOneRunnableThreadDoesNothing) {
  // yield_task_fair() returns at once when its run queue has one task: the deadline is not
  // pushed out, so a thread that wakes later gets the pCPU at the next slice end (3 ms), not
  // after the yields' extra slices.
  scenario::HostSpec spec;
  spec.scheduler = scenario::HostSpec::Scheduler::eevdf;
  spec.housekeeping_interval_ns = 0;
  Recorder rec;
  HostScheduler s(spec, topo(1), rec);
  const ThreadId runner = s.add_thread(0, false);
  const ThreadId sleeper = s.add_sleeping_thread(0, false);
  std::int64_t now = 0;
  s.start(now);
  ASSERT_EQ(s.current(0), runner);
  for (int i = 0; i < 10; ++i) s.yield(runner, now);  // alone: ten no-ops
  EXPECT_EQ(s.current(0), runner);
  s.wake(sleeper, now);
  rec.switches.clear();
  run_until(s, spec, now, 40'000'000);
  ASSERT_FALSE(rec.switches.empty());
  EXPECT_EQ(rec.switches.front().next, sleeper);
  EXPECT_LE(rec.switches.front().now, 4'000'000);
}

TEST(HostScheduler, YieldToABlockedThreadFails) {
  scenario::HostSpec spec;
  Recorder rec;
  HostScheduler s(spec, topo(2), rec);
  const ThreadId a = s.add_thread(0, false);
  const ThreadId b = s.add_thread(1, false);
  std::int64_t now = 0;
  s.start(now);
  s.block(b, now);
  EXPECT_FALSE(s.yield_to(a, b, now));
  EXPECT_EQ(s.current(0), a);
}

TEST(HostScheduler, PinnedThreadsNeverMigrate) {
  scenario::HostSpec spec;
  Recorder rec;
  HostScheduler s(spec, topo(4), rec);
  for (int i = 0; i < 8; ++i) s.add_thread(0, true);
  std::int64_t now = 0;
  s.start(now);
  run_until(s, spec, now, 200'000'000);
  for (ThreadId t = 0; t < 8; ++t) EXPECT_EQ(s.pcpu_of(t), 0);
  EXPECT_EQ(s.current(1), kIdle);
  EXPECT_EQ(s.migrations(), 0u);
}

TEST(HostScheduler, WakePrefersAnIdlePcpuOfTheSameSocket) {
  scenario::HostSpec spec;
  spec.sched_migration_cost_ns = 0;  // at time 0 every thread is cache-hot: let pCPU 1 pull one
  Recorder rec;
  HostScheduler s(spec, topo(4, 2), rec);  // pCPUs 0,1 socket 0; 2,3 socket 1
  const ThreadId a = s.add_thread(0, false);
  const ThreadId b = s.add_thread(0, false);
  std::int64_t now = 0;
  s.start(now);  // pCPU 1 pulls b when it finds nothing to run
  EXPECT_EQ(s.pcpu_of(b) == 1 || s.pcpu_of(a) == 1, true);
  const ThreadId on1 = s.current(1);
  s.block(on1, now);
  EXPECT_EQ(s.current(1), kIdle);
  s.wake(on1, now);
  EXPECT_EQ(s.pcpu_of(on1), 1);  // its previous pCPU is idle again
}

// Load balancing as a 4.19-5.4 host does it (fair.c): a newly idle pCPU pulls a waiting
// thread only if its idle periods have averaged sysctl_sched_migration_cost (avg_idle) and
// the thread is not cache-hot; an idle pCPU takes no tick (NO_HZ); periodic balancing pulls
// at the domain's interval. Two pCPUs, one socket: A runs on 0, D on 1; E sleeps (home 0).
struct BalanceFixture {
  scenario::HostSpec spec;
  Recorder rec;
  HostScheduler s;
  ThreadId a, d, e;
  std::int64_t now = 0;
  explicit BalanceFixture(std::int64_t sched_migration_cost_ns)
      : spec([&] {
          scenario::HostSpec h;
          h.sched_migration_cost_ns = sched_migration_cost_ns;
          h.sched_wakeup_granularity_ns = 1'000'000'000;  // a woken thread waits, never preempts
          return h;
        }()),
        s(spec, topo(2), rec) {
    a = s.add_thread(0, false);
    d = s.add_thread(1, false);
    e = s.add_sleeping_thread(0, false);
    s.start(now);
  }
  // D halts for `idle` and is woken `times` times: pCPU 1's idle periods are that short.
  void short_idles(int times, std::int64_t idle) {
    for (int i = 0; i < times; ++i) {
      now += 1'000'000;
      s.block(d, now);
      now += idle;
      s.wake(d, now);
    }
  }
  // E wakes while both pCPUs are busy: it waits on pCPU 0 behind A; 1 ms later D halts.
  void e_waits_then_d_halts() {
    now += 1'000'000;
    ASSERT_EQ(s.wake(e, now), HostScheduler::WakeOutcome::queued);
    ASSERT_EQ(s.pcpu_of(e), 0);
    now += 1'000'000;
    s.block(d, now);
  }
};

TEST(HostScheduler, NewlyIdlePcpuPullsAColdWaitingThread) {
  BalanceFixture f(500'000);
  f.e_waits_then_d_halts();
  EXPECT_EQ(f.s.current(1), f.e);  // avg_idle starts at 1 ms: newidle_balance pulls E
}

TEST(HostScheduler, NewlyIdlePcpuWithShortIdlePeriodsDoesNotPull) {
  BalanceFixture f(500'000);
  f.short_idles(30, 10'000);  // avg_idle decays towards 10 us
  f.e_waits_then_d_halts();
  EXPECT_EQ(f.s.current(1), kIdle);
  EXPECT_EQ(f.s.pcpu_of(f.e), 0);
  // No tick pulls for it (NO_HZ idle) ...
  for (int k = 1; k <= 3; ++k) f.s.tick(1, f.now + k * 1'000'000);
  EXPECT_EQ(f.s.current(1), kIdle);
  // ... the periodic balance of its 2-CPU domain does, within 2 ms.
  f.s.balance(f.now + 3'000'000);
  EXPECT_EQ(f.s.current(1), f.e);
  // Without the migration cost, the same idle period pulls at once.
  BalanceFixture g(0);
  g.short_idles(30, 10'000);
  g.e_waits_then_d_halts();
  EXPECT_EQ(g.s.current(1), g.e);
}

TEST(HostScheduler, NewlyIdlePcpuLeavesACacheHotThread) {
  // E woke and ran on pCPU 0 a moment ago, then A preempted it back into the queue: when D
  // halts 100 us later, E is cache-hot and stays; after 500 us it would be pulled.
  for (const std::int64_t cost : {500'000, 0}) {
    BalanceFixture f(cost);
    f.now += 1'000'000;
    f.s.wake(f.e, f.now);
    f.s.yield(f.a, f.now);  // pCPU 0 switches to E
    ASSERT_EQ(f.s.current(0), f.e);
    f.now += 50'000;
    f.s.yield(f.e, f.now);  // and back to A: E waits, warm
    ASSERT_EQ(f.s.current(0), f.a);
    f.now += 100'000;
    f.s.block(f.d, f.now);
    EXPECT_EQ(f.s.current(1), cost > 0 ? kIdle : f.e) << cost;
  }
}

TEST(HostScheduler, AHaltPollerGivesWayToAThreadPulledByBalancing) {
  // Periodic load_balance() of a busy pCPU pulls from a queue two or more longer; the
  // thread it attaches makes the poller's single_task_running() false as a wake-up does.
  for (const bool polling : {true, false}) {
    scenario::HostSpec spec;
    Recorder rec;
    HostScheduler s(spec, topo(2), rec);
    const ThreadId poller = s.add_thread(0, false);
    for (int i = 0; i < 3; ++i) s.add_thread(1, false);
    std::int64_t now = 0;
    s.start(now);
    s.set_polling(poller, polling);
    rec.switches.clear();
    now += 1'000'000'000;  // every balance interval is due
    s.balance(now);
    EXPECT_EQ(s.nr_running(1), 2) << polling;  // one thread was pulled to pCPU 0
    if (polling) {
      EXPECT_FALSE(s.runnable(poller));
      EXPECT_NE(s.current(0), kIdle);
      ASSERT_FALSE(rec.switches.empty());
      EXPECT_EQ(rec.switches.front().prev, poller);
      EXPECT_FALSE(rec.switches.front().prev_runnable);
    } else {
      EXPECT_TRUE(s.runnable(poller));  // it waits or runs; nothing blocks it
      EXPECT_EQ(s.nr_running(0), 2);
    }
  }
}

}  // namespace
}  // namespace pvlock::sim::host
