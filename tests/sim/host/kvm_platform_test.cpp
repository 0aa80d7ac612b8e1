// SPDX-License-Identifier: GPL-2.0-only
// The KVM platform end to end, through small scenarios: over-commit makes vCPUs lose their
// pCPU (steal time, lock-waiter preemption), PV locks halt and kick, halt polling, the kick
// boost and pause-loop exits do what their knobs say, and runs are deterministic.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/host/scenario_run.hpp"

namespace pvlock::sim {
namespace {

// 2 VMs x 8 vCPUs on 8 pCPUs (2x over-commit), lockloop on one guest spinlock.
const char* kOvercommit = R"(
[run]
duration_ms = 30
warmup_ms = 5
seed = 7
[machine]
sockets = 1
cores_per_socket = 8
threads_per_core = 1
[host]
scheduler = "cfs"
[[vm]]
name = "vm"
count = 2
vcpus = 8
[vm.guest]
lock = "pvqspinlock"
[vm.workload]
type = "lockloop"
compute_ns = { dist = "exp", mean = 2000 }
hold_ns = 1000
)";

nlohmann::ordered_json run(const std::vector<std::string>& overrides) {
  return test::run_toml(kOvercommit, "kvm_test.toml", overrides);
}

// The same scenario with native qspinlock waiters, which spin (and take PLE exits) until
// they get the lock; without the simulator's timing figures (`perf`).
nlohmann::ordered_json run_spinning(const std::vector<std::string>& more) {
  std::vector<std::string> o = {"vm[0].guest.lock=qspinlock"};
  o.insert(o.end(), more.begin(), more.end());
  auto j = run(o);
  j.erase("perf");
  return j;
}

std::uint64_t counter(const nlohmann::ordered_json& j, const char* name) {
  return j.at("counters").at(name).get<std::uint64_t>();
}

TEST(KvmPlatform, DeterministicWithSeveralVms) {
  auto a = run({});
  auto b = run({});
  a.erase("perf");
  b.erase("perf");
  EXPECT_EQ(a.dump(), b.dump());
  auto c = run({"run.seed=8"});
  c.erase("perf");
  EXPECT_NE(a.dump(), c.dump());
}

TEST(KvmPlatform, OvercommitStealsTimeAndPreemptsWaiters) {
  const auto j = run({"vm[0].guest.lock=qspinlock"});
  const auto& h = j.at("host");
  // Two runnable vCPUs per pCPU: each waits about half of the time.
  EXPECT_GT(h.at("steal_pct").get<double>(), 30.0);
  EXPECT_LT(h.at("steal_pct").get<double>(), 70.0);
  EXPECT_GT(h.at("preemptions").get<std::uint64_t>(), 0u);
  EXPECT_GT(h.at("lock_waiter_preemptions").get<std::uint64_t>(), 0u);
}

TEST(KvmPlatform, NoOvercommitNoSteal) {
  const auto j = run({"vm[0].count=1", "host.housekeeping_interval_ns=0"});
  EXPECT_EQ(j.at("host").at("preemptions").get<std::uint64_t>(), 0u);
  EXPECT_DOUBLE_EQ(j.at("host").at("steal_pct").get<double>(), 0.0);
}

TEST(KvmPlatform, HousekeepingPreemptsBriefly) {
  // Without over-commit, the host's own per-pCPU work (every ~5 ms for ~20 us) preempts
  // vCPUs now and then: some preemptions, well under 2 % steal.
  const auto j = run({"vm[0].count=1"});
  EXPECT_GT(j.at("host").at("preemptions").get<std::uint64_t>(), 0u);
  EXPECT_LT(j.at("host").at("steal_pct").get<double>(), 2.0);
}

TEST(KvmPlatform, OvercommittedVmsAreNotGangScheduled) {
  // Regression: directed yields (PLE) once lined up every pCPU's CFS slice boundary, after
  // which the two VMs ran in alternation, 16 vCPUs at a time, and a FIFO lock never met a
  // preempted waiter: each VM scored exactly half its 1x score. Host housekeeping keeps
  // slice boundaries out of phase, so native qspinlock keeps meeting preempted waiters.
  const auto j = run({"vm[0].guest.lock=qspinlock"});
  const auto& h = j.at("host");
  const auto pre = h.at("preemptions").get<double>();
  EXPECT_GT(h.at("lock_waiter_preemptions").get<double>(), 0.5 * pre);
  const auto& vms = j.at("vms");
  EXPECT_NE(vms.at(0).at("score").get<double>(), vms.at(1).at("score").get<double>());
}

TEST(KvmPlatform, PvLockHaltsAndKicks) {
  // 16 vCPUs per VM and a short SPIN_THRESHOLD, so that queued waiters halt in this short run.
  const auto j = run({"vm[0].vcpus=16", "vm[0].guest.spin_threshold=64"});
  EXPECT_GT(counter(j, "pv_wait_node"), 0u);
  EXPECT_GT(counter(j, "pv_kick_unlock"), 0u);
  const auto& h = j.at("host");
  EXPECT_GT(h.at("exits").at("hlt").get<std::uint64_t>(), 0u);
  EXPECT_GT(h.at("exits").at("kick").get<std::uint64_t>(), 0u);
  // Over-committed pCPUs have other work: HLT blocks instead of polling.
  EXPECT_GT(h.at("halt_blocks").get<std::uint64_t>(), 0u);
}

TEST(KvmPlatform, WokenVcpusAreCountedByWhereTheHostPutThem) {
  // Over-committed, halting guests: every wake-up of a blocked vCPU lands in exactly one
  // class, and only queued ones wait; their waits end by a yield, a block or the tick (or
  // balancing, not counted separately), never more often than they were queued.
  const auto j = run({"vm[0].vcpus=16", "vm[0].guest.spin_threshold=64"});
  const auto& w = j.at("host").at("wakeups");
  const auto n = [&](const char* k) { return w.at(k).get<std::uint64_t>(); };
  EXPECT_GT(n("onto_idle") + n("preempting") + n("queued"), 0u);
  EXPECT_GT(n("queued"), 0u);
  EXPECT_LE(n("queued_ran"), n("queued") + 16 * 2);  // + waits begun before the window
  const auto& by = w.at("queued_ended_by");
  EXPECT_LE(by.at("yield").get<std::uint64_t>() + by.at("block").get<std::uint64_t>() +
                by.at("tick").get<std::uint64_t>(),
            n("queued_ran"));
  if (n("queued_ran") > 0) {
    EXPECT_GT(w.at("queued_wait_ns").get<std::int64_t>(), 0);
  }
  // Per-VM counters add up to the host's.
  std::uint64_t queued = 0;
  for (const auto& vm : j.at("vms"))
    queued += vm.at("host").at("wakeups").at("queued").get<std::uint64_t>();
  EXPECT_EQ(queued, n("queued"));
  // Without over-commit nobody queues behind another vCPU.
  const auto alone =
      run({"vm[0].count=1", "vm[0].guest.spin_threshold=64", "host.housekeeping_ns=0"});
  EXPECT_EQ(alone.at("host").at("wakeups").at("queued").get<std::uint64_t>(), 0u);
}

TEST(KvmPlatform, HaltPollingOnlyWhenEnabledAndAlone) {
  // One VM on its own pCPUs: halting vCPUs poll and the kick catches them polling.
  const auto polled = run({"vm[0].count=1", "vm[0].guest.spin_threshold=64"});
  EXPECT_GT(polled.at("host").at("halt_polls_ok").get<std::uint64_t>(), 0u);
  const auto off =
      run({"vm[0].count=1", "vm[0].guest.spin_threshold=64", "host.kvm.halt_poll_ns=0"});
  EXPECT_EQ(off.at("host").at("halt_polls_ok").get<std::uint64_t>(), 0u);
  EXPECT_GT(off.at("host").at("halt_blocks").get<std::uint64_t>(), 0u);
}

TEST(KvmPlatform, AHaltPollerGivesWayWhenAnotherThreadWakesOnItsPcpu) {
  // One VM alone (its halts poll) on a host whose housekeeping threads wake every 200 us:
  // a kworker waking where a vCPU polls ends the poll, and the vCPU blocks (counted among
  // the halts that blocked) instead of being preempted and switched back in to block.
  const auto busy = run(
      {"vm[0].count=1", "vm[0].guest.spin_threshold=64", "host.housekeeping_interval_ns=200000"});
  const auto& h = busy.at("host");
  EXPECT_GT(h.at("halt_polls_given_way").get<std::uint64_t>(), 0u);
  EXPECT_LE(h.at("halt_polls_given_way").get<std::uint64_t>(),
            h.at("halt_blocks").get<std::uint64_t>());
  // Without polling nothing polls to give way.
  const auto off = run({"vm[0].count=1", "vm[0].guest.spin_threshold=64",
                        "host.housekeeping_interval_ns=200000", "host.kvm.halt_poll_ns=0"});
  EXPECT_EQ(off.at("host").at("halt_polls_given_way").get<std::uint64_t>(), 0u);
}

TEST(KvmPlatform, KickBoostYieldsOnlyWhenEnabled) {
  const auto on = run({"host.kvm.kick_boost=true", "host.kvm.irq_boost=true", "vm[0].vcpus=16",
                       "vm[0].guest.spin_threshold=64"});
  EXPECT_GT(on.at("host").at("kick_yields").at("tried").get<std::uint64_t>(), 0u);
  EXPECT_GT(on.at("host").at("kick_yields").at("done").get<std::uint64_t>(), 0u);
  const auto off =
      run({"host.kvm.kick_boost=false", "vm[0].vcpus=16", "vm[0].guest.spin_threshold=64"});
  EXPECT_EQ(off.at("host").at("kick_yields").at("tried").get<std::uint64_t>(), 0u);
}

TEST(KvmPlatform, EveryKickTimeYieldAttemptEndsOneWay) {
  // tried = done + lost to TTWU_QUEUE + both run queues single + refused, for the host and
  // for each VM; of those done, the ones onto the kicker's own pCPU and those that cost the
  // kicker its pCPU are subsets.
  const auto j = run({"host.kvm.kick_boost=true", "host.kvm.irq_boost=true", "vm[0].vcpus=16",
                      "vm[0].guest.spin_threshold=64", "machine.sockets=2",
                      "machine.cores_per_socket=4", "run.duration_ms=60", "run.watchdog_ms=0"});
  auto check = [](const nlohmann::ordered_json& k) {
    auto n = [&](const char* key) { return k.at(key).get<std::uint64_t>(); };
    EXPECT_EQ(n("tried"), n("done") + n("lost_to_ttwu_queue") + n("both_single") + n("refused"));
    EXPECT_LE(n("onto_kicker_pcpu"), n("done"));
    EXPECT_LE(n("to_switching_in"), n("done"));
    EXPECT_LE(n("target_left_waiting"), n("done"));
    EXPECT_LE(n("kicker_descheduled"), n("done"));
    return n("kicker_descheduled");
  };
  EXPECT_GT(check(j.at("host").at("kick_yields")), 0u);  // over-committed: the kicker pays
  std::uint64_t per_vm = 0;
  for (const auto& vm : j.at("vms")) per_vm += check(vm.at("host").at("kick_yields"));
  EXPECT_EQ(per_vm, j.at("host").at("kick_yields").at("kicker_descheduled").get<std::uint64_t>());
}

TEST(KvmPlatform, AKickTimeYieldCanLeaveTheHeadWaitingForItsPcpu) {
  // yield_to() makes the kicked head the next buddy of its pCPU and reschedules it, but
  // pick_next_entity() runs a next buddy only within the wakeup granularity of the leftmost
  // thread there: a head too far ahead in vruntime stays queued. A head the kick itself
  // switched in is already its pCPU's pick and is never left waiting.
  const auto j = run({"host.kvm.kick_boost=true", "host.kvm.irq_boost=true", "vm[0].vcpus=16",
                      "vm[0].guest.spin_threshold=64", "machine.sockets=2",
                      "machine.cores_per_socket=4", "run.duration_ms=60", "run.watchdog_ms=0"});
  const auto& k = j.at("host").at("kick_yields");
  auto n = [&](const char* key) { return k.at(key).get<std::uint64_t>(); };
  EXPECT_GT(n("target_left_waiting"), 0u);
  EXPECT_LE(n("target_left_waiting") + n("to_switching_in"), n("done"));
}

TEST(KvmPlatform, AKickTimeYieldToAVcpuTheKickSwitchedInGoesAhead) {
  // The kick wakes the queue head onto an idle pCPU (or preempting): the host has picked it,
  // but p->on_cpu is only set by that CPU's context switch, after this hypercall's
  // yield_to() has looked. So yield_to() goes ahead, and the kicker yields its own pCPU if it
  // has company there. One socket, so that no wake-up is left on a remote wake list.
  const auto j = run({"host.kvm.kick_boost=true", "host.kvm.irq_boost=true", "vm[0].vcpus=16",
                      "vm[0].guest.spin_threshold=64", "run.duration_ms=60", "run.watchdog_ms=0"});
  const auto& k = j.at("host").at("kick_yields");
  EXPECT_GT(k.at("to_switching_in").get<std::uint64_t>(), 0u);
  EXPECT_GT(j.at("host").at("wakeups").at("onto_idle").get<std::uint64_t>(), 0u);
}

TEST(KvmPlatform, TimesEachKickToItsTargetsGuestEntryByWhereTheKickFoundIt) {
  // Every kick to a vCPU outside the guest ends at that vCPU's next guest entry, counted
  // once under the path the kick found: a target the wake-up put on its pCPU enters within
  // the switch latency, a queued one waits for its pCPU. Without the kick boost no path is
  // a "yielded to" one; with it, a yield that went through gets a queued target in sooner
  // (one socket: no wake-up is left on a remote wake list).
  auto entries = [](const nlohmann::ordered_json& j, const char* path) {
    return j.at("host").at("kick_to_entry").at(path);
  };
  auto mean_us = [&](const nlohmann::ordered_json& j, const char* path) {
    const auto& e = entries(j, path);
    return static_cast<double>(e.at("ns").get<std::int64_t>()) /
           static_cast<double>(e.at("n").get<std::uint64_t>()) / 1e3;
  };
  const std::vector<std::string> common = {"host.kvm.irq_boost=true", "vm[0].vcpus=16",
                                           "vm[0].guest.spin_threshold=64", "run.duration_ms=60",
                                           "run.watchdog_ms=0"};
  auto with = [&](const char* boost) {
    std::vector<std::string> o = common;
    o.emplace_back(boost);
    return run(o);
  };
  const auto off = with("host.kvm.kick_boost=false");
  std::uint64_t timed = 0;
  for (const char* p : {"on_cpu", "queued", "queued_yielded", "runnable", "runnable_yielded"})
    timed += entries(off, p).at("n").get<std::uint64_t>();
  EXPECT_GT(timed, 0u);
  EXPECT_LE(timed, off.at("host").at("kicks").get<std::uint64_t>());
  EXPECT_EQ(entries(off, "queued_yielded").at("n").get<std::uint64_t>(), 0u);
  EXPECT_EQ(entries(off, "runnable_yielded").at("n").get<std::uint64_t>(), 0u);
  ASSERT_GT(entries(off, "on_cpu").at("n").get<std::uint64_t>(), 0u);
  ASSERT_GT(entries(off, "queued").at("n").get<std::uint64_t>(), 0u);
  // An on-CPU target enters within the switch latency (~6 us here). Rarely it loses its pCPU
  // again before it gets there (another wake-up preempts it): one such wait of a few ms among
  // ~300 entries moves the mean by ~7 us, so the bound leaves room for one or two, and at
  // most 1 % of the entries may be one.
  EXPECT_LT(mean_us(off, "on_cpu"), 25.0);
  EXPECT_LE(entries(off, "on_cpu").at("over_1ms").get<std::uint64_t>() * 100,
            entries(off, "on_cpu").at("n").get<std::uint64_t>());
  // A queued one waits for its pCPU: milliseconds, far more than a switch.
  EXPECT_GT(mean_us(off, "queued"), 20 * mean_us(off, "on_cpu"));
  const auto on = with("host.kvm.kick_boost=true");
  ASSERT_GT(entries(on, "queued_yielded").at("n").get<std::uint64_t>(), 0u);
  EXPECT_LT(mean_us(on, "queued_yielded"), mean_us(on, "queued"));
}

TEST(KvmPlatform, CountsVcpuMigrationsOnlyWhereVcpusFloat) {
  // Over-committed floating vCPUs are woken onto idle pCPUs and pulled by balancing: they
  // enter on other pCPUs than they left. Pinned ones never do.
  const auto floating = run({"vm[0].guest.spin_threshold=64"});
  const auto n = [](const nlohmann::ordered_json& h) {
    return h.at("migrations").get<std::uint64_t>();
  };
  EXPECT_GT(n(floating.at("host")), 0u);
  std::uint64_t per_vm = 0;
  for (const auto& vm : floating.at("vms")) per_vm += n(vm.at("host"));
  EXPECT_EQ(per_vm, n(floating.at("host")));
  const auto pinned =
      run({"vm[0].guest.spin_threshold=64", "vm[0].placement=pinned", "vm[0].vcpus=4"});
  EXPECT_EQ(n(pinned.at("host")), 0u);
}

TEST(KvmPlatform, CountsSwitchInsAndThoseADirectedYieldCancelsBeforeGuestEntry) {
  // Spinning waiters at 2x over-commit yield to each other at every PLE exit: every remote
  // yield_to() reschedules its target's pCPU, and a vCPU still in its switch-in latency
  // there loses the pCPU before it enters the guest.
  const auto storm = run_spinning({});
  const auto sw = [](const nlohmann::ordered_json& h) {
    return std::pair{h.at("switch_ins").at("n").get<std::uint64_t>(),
                     h.at("switch_ins").at("cancelled_before_entry").get<std::uint64_t>()};
  };
  const auto [n, cancelled] = sw(storm.at("host"));
  EXPECT_GT(cancelled, 0u);
  EXPECT_LT(cancelled, n);
  // Per VM they add up to the host's.
  std::uint64_t n_vms = 0, cancelled_vms = 0;
  for (const auto& vm : storm.at("vms")) {
    n_vms += sw(vm.at("host")).first;
    cancelled_vms += sw(vm.at("host")).second;
  }
  EXPECT_EQ(n_vms, n);
  EXPECT_EQ(cancelled_vms, cancelled);
  // One VM, one vCPU per pCPU, no host noise: nothing is ever switched out in the window.
  const auto alone = run({"vm[0].count=1", "host.housekeeping_interval_ns=0"});
  EXPECT_EQ(sw(alone.at("host")).second, 0u);
}

TEST(KvmPlatform, KickBoostBailsOutWhenUndercommittedOnlyOnNewerHosts) {
  // One VM, no over-commit, no host housekeeping, no halt polling (a polling vCPU is not
  // "woken", so not ready): the kicker is alone on its pCPU. Hosts
  // since a1fa4cbd53d0 do not even try to yield then; the seeds' 2019 hosts did.
  const std::vector<std::string> base = {"vm[0].count=1",
                                         "host.housekeeping_interval_ns=0",
                                         "host.kvm.kick_boost=true",
                                         "host.kvm.irq_boost=true",
                                         "vm[0].vcpus=8",
                                         "vm[0].guest.spin_threshold=64",
                                         "host.kvm.halt_poll_ns=0"};
  auto with = [&](const char* extra) {
    auto o = base;
    o.emplace_back(extra);
    return run(o).at("host").at("kick_yields").at("tried").get<std::uint64_t>();
  };
  EXPECT_EQ(with("host.kvm.yield_bailout_undercommit=true"), 0u);
  EXPECT_GT(with("host.kvm.yield_bailout_undercommit=false"), 0u);
}

TEST(KvmPlatform, KickBoostLosesTheRaceWithACrossSocketWakeUp) {
  // TTWU_QUEUE: a kick that wakes a halted vCPU whose pCPU is on the other socket leaves
  // the wake-up on that CPU's wake list, and kvm_sched_yield()'s yield_to() finds the thread
  // still TASK_WAKING. Same scenario on one socket: the feature changes nothing.
  // 60 ms, no watchdog: 4x over-commit on 8 pCPUs leaves a queue head without a pCPU for
  // longer than the short run's watchdog allows, and enough kicks cross sockets.
  const std::vector<std::string> base = {
      "host.kvm.kick_boost=true",      "host.kvm.irq_boost=true", "vm[0].vcpus=16",
      "vm[0].guest.spin_threshold=64", "run.duration_ms=60",      "run.watchdog_ms=0"};
  auto with = [&](std::vector<std::string> extra) {
    auto o = base;
    o.insert(o.end(), extra.begin(), extra.end());
    auto j = run(o);
    j.erase("perf");
    return j;
  };
  auto done = [](const nlohmann::ordered_json& j) {
    return j.at("host").at("kick_yields").at("done").get<std::uint64_t>();
  };
  const char* two_sockets[] = {"machine.sockets=2", "machine.cores_per_socket=4"};
  const auto queued = with({two_sockets[0], two_sockets[1], "host.ttwu_queue=true"});
  const auto direct = with({two_sockets[0], two_sockets[1], "host.ttwu_queue=false"});
  EXPECT_GT(queued.at("host").at("kick_yields").at("tried").get<std::uint64_t>(), 0u);
  EXPECT_LT(done(queued), done(direct));
  // The lost race is counted as such, and only with the feature.
  auto lost = [](const nlohmann::ordered_json& j) {
    return j.at("host").at("kick_yields").at("lost_to_ttwu_queue").get<std::uint64_t>();
  };
  EXPECT_GT(lost(queued), 0u);
  EXPECT_EQ(lost(direct), 0u);
  EXPECT_EQ(with({"host.ttwu_queue=true"}).dump(), with({"host.ttwu_queue=false"}).dump());
}

TEST(KvmPlatform, PauseLoopExitsOnlyWithPle) {
  const auto on = run({"vm[0].guest.lock=qspinlock"});
  EXPECT_GT(on.at("host").at("exits").at("ple").get<std::uint64_t>(), 0u);
  const auto off = run({"vm[0].guest.lock=qspinlock", "host.kvm.ple=false"});
  EXPECT_EQ(off.at("host").at("exits").at("ple").get<std::uint64_t>(), 0u);
}

TEST(KvmPlatform, PleWindowIsCountedInTscCyclesAtTheHostsRate) {
  // The SDM measures the PAUSE-loop window with a counter at the TSC's rate: 8 192 cycles of
  // a 5 GHz TSC are the same 1.64 us as 4 096 cycles of a 2.5 GHz one (the seeds' host).
  const auto seeds_host = run_spinning({"host.kvm.cycles_per_ns=2.5"});
  const auto same_time = run_spinning({"host.kvm.cycles_per_ns=5", "host.kvm.ple_window=8192"});
  EXPECT_EQ(seeds_host.at("host").dump(), same_time.at("host").dump());
  EXPECT_EQ(seeds_host.at("counters").dump(), same_time.at("counters").dump());
  // A faster counter fills the same window sooner: more exits.
  const auto fast = run_spinning({"host.kvm.cycles_per_ns=10"});
  auto exits = [](const nlohmann::ordered_json& j) {
    return j.at("host").at("exits").at("ple").get<std::uint64_t>();
  };
  EXPECT_GT(exits(seeds_host), 0u);
  EXPECT_GT(exits(fast), exits(seeds_host));
}

TEST(KvmPlatform, InSpinLoopUntilSelectsTheSpinLoopMarksExtent) {
  // PLE handlers keep looking at spinners here. The default is the simulator's rule
  // (SpinLoopState; semantics in directed_yield_test.cpp); the kernel's rule makes spinners
  // preempted outside their own handler eligible at every look, which changes whom the
  // handlers yield to.
  const std::string dflt = run_spinning({}).dump();
  EXPECT_EQ(dflt, run_spinning({"host.kvm.in_spin_loop_until=spin_end"}).dump());
  EXPECT_NE(dflt, run_spinning({"host.kvm.in_spin_loop_until=handler_end"}).dump());
}

TEST(KvmPlatform, WaitEarlyOnPreemptedPredecessorNeedsTheRule) {
  // Seed 000: with the 2017 rule a waiter also stops spinning when its predecessor's vCPU
  // is preempted (the steal-time byte), so more waiters halt early.
  const auto upstream = run({"vm[0].guest.wait_early=prev_halted"});
  const auto old = run({"vm[0].guest.wait_early=prev_halted_or_preempted"});
  EXPECT_GT(counter(old, "vcpu_is_preempted_calls"), counter(upstream, "vcpu_is_preempted_calls"));
}

TEST(KvmPlatform, PinnedVcpusNeverMigrate) {
  const auto j =
      run({"vm[0].count=1", "vm[0].placement=\"pinned\"", "host.housekeeping_interval_ns=0"});
  EXPECT_EQ(j.at("host").at("preemptions").get<std::uint64_t>(), 0u);
}

// ebizzy in 2 x 8 vCPUs on 8 pCPUs with the 2017 wait-early rule: queued waiters halt with
// IRQs off (zone->lock is taken with spin_lock_irqsave) while madvise's TLB shootdowns send
// them IPIs.
const char* kEbizzyCascade = R"(
[run]
duration_ms = 60
warmup_ms = 5
seed = 3
watchdog_ms = 0
[machine]
sockets = 1
cores_per_socket = 8
threads_per_core = 1
[host]
scheduler = "cfs"
[[vm]]
name = "vm"
count = 2
vcpus = 8
[vm.guest]
lock = "pvqspinlock"
wait_early = "prev_halted_or_preempted"
[vm.workload]
type = "ebizzy"
)";

std::uint64_t host_counter(const nlohmann::ordered_json& j, const char* name) {
  return j.at("host").at(name).get<std::uint64_t>();
}

TEST(KvmPlatform, InterruptToAnIrqsOffHaltWakesTheThreadOnlyToBlockAgain) {
  // kvm_vcpu_kick() wakes the blocked thread although the halted guest cannot take the
  // interrupt. With APICv only the IPI that sets the descriptor's ON bit kicks, so without
  // guest timer ticks (which kick once more) at most once per blocked halt.
  const auto no_tick =
      test::run_toml(kEbizzyCascade, "masked_wake.toml", {"vm[0].guest.tick_ns=10000000000"});
  const std::uint64_t by_ipi = host_counter(no_tick, "halt_masked_wakes");
  EXPECT_GT(by_ipi, 0u);
  EXPECT_LE(by_ipi, host_counter(no_tick, "halt_blocks"));
  // The guest never saw those wake-ups: every pv_wait still ended with a kick.
  EXPECT_EQ(counter(no_tick, "pv_spurious_wakeup"), 0u);
  // The guest's timer tick (HZ=250) kicks a halted vCPU too.
  const auto j = test::run_toml(kEbizzyCascade, "masked_wake.toml", {});
  EXPECT_GT(host_counter(j, "halt_masked_wakes"), 0u);
  EXPECT_EQ(counter(j, "pv_spurious_wakeup"), 0u);
  // Without halts (the reverted rule spins) there is nothing to wake.
  const auto revert =
      test::run_toml(kEbizzyCascade, "masked_wake.toml", {"vm[0].guest.wait_early=prev_halted"});
  EXPECT_EQ(host_counter(revert, "halt_masked_wakes"), 0u);
  // The scenario key is validated like every other.
  EXPECT_THROW(test::run_toml(kEbizzyCascade, "masked_wake.toml", {"host.kvm.apicv=2"}),
               std::exception);
}

TEST(KvmPlatform, TheGuestTimerWakesAnIrqsOffHaltAtMostOnce) {
  // Every kick lost: waiters halted in pv_wait with IRQs off stay halted for the rest of the
  // run (tens of ms, many 4 ms guest ticks). The TSC-deadline timer fires once; its interrupt
  // then waits in the IRR and the guest programs no next deadline, so a blocked halt gets at
  // most one timer wake-up -- lockloop sends no IPIs, so every masked wake-up is the timer's.
  const auto j = run({"vm[0].workload.irqs_off=true", "faults.drop_kick=1", "run.watchdog_ms=0"});
  const std::uint64_t wakes = host_counter(j, "halt_masked_wakes");
  EXPECT_GT(wakes, 0u);
  EXPECT_LE(wakes, host_counter(j, "halt_blocks"));
}

}  // namespace
}  // namespace pvlock::sim
