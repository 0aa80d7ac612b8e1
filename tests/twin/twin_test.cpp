// SPDX-License-Identifier: GPL-2.0-only
// `pvlock twin` on tiny settings: the twin scenarios parse and simulate, the statistics are
// right on known inputs, and the whole pipeline (native cells, simulations, summary, JSON)
// runs end to end. Nothing asserts a time or a throughput level.
#include "twin/twin.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/calibration.hpp"
#include "scenario/parse.hpp"
#include "twin/rank.hpp"
#include "twin/twin_locks.hpp"
#include "twin/twin_scenario.hpp"

namespace pvlock::twin {
namespace {

calibrate::Calibration fake_calibration() {
  using calibrate::summarize;
  calibrate::Calibration c;
  c.topology.cpus = {{0, 0, 0, {0}}, {1, 0, 1, {1}}};
  c.topology.sockets = 1;
  c.topology.cores_per_socket = 2;
  c.kernel.release = "6.18.0";
  c.kernel.scheduler = "eevdf";
  c.kernel.config_hz = 250;
  c.l1_hit_ns = summarize({1.2});
  c.atomic_rmw_ns = summarize({6});
  c.pause_ns = summarize({30});
  c.xfer_socket_ns = summarize({70});
  c.futex_wake_to_run_ns = summarize({25000});
  c.futex_waker_ns = summarize({2500});
  c.syscall_ns = summarize({350});
  c.context_switch_ns = summarize({3000});
  c.tick_interval_ns = summarize({4e6});
  c.tick_gap_ns = summarize({4000});
  c.slice_ns = summarize({4e6});
  c.steal_fraction = 0.05;
  return c;
}

SimSettings tiny_sim() {
  SimSettings s;
  s.duration_ms = 2;
  s.warmup_ms = 1;
  return s;
}

TEST(Rank, TiesShareTheirMeanRank) {
  const std::vector<double> r = ranks({10, 30, 20, 30});
  EXPECT_EQ(r, (std::vector<double>{1, 3.5, 2, 3.5}));
}

TEST(Rank, Spearman) {
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Monotone but not linear: still 1.
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3}, {1, 100, 101}), 1.0);
  // 1 - 6 sum d^2 / (n (n^2 - 1)) with d = (0, 1, -1): 1 - 12/24.
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3}, {1, 3, 2}), 0.5);
  EXPECT_FALSE(spearman({1}, {1}));
  EXPECT_FALSE(spearman({1, 1}, {1, 2}));
}

TEST(TwinLocks, EveryTwinIsARegisteredLockAndKnobsParse) {
  const std::vector<TwinLock> all = twin_locks();
  for (const char* required :
       {"tas", "ticket", "mcs", "qspinlock", "pvqspinlock", "mutex", "std_mutex"}) {
    EXPECT_NO_THROW((void)find_twin(required)) << required;
  }
  for (const TwinLock& t : all) {
    EXPECT_NO_THROW((void)twin_scenario(fake_calibration(), t, 2, {}, tiny_sim())) << t.native;
  }
  EXPECT_THROW((void)find_twin("busted"), std::invalid_argument);
}

TEST(TwinScenario, TheMachineIsTheCalibratedOneAndThreadsAreVcpus) {
  const scenario::Scenario sc =
      twin_scenario(fake_calibration(), find_twin("std_mutex"), 8, {300, 700}, tiny_sim());
  EXPECT_EQ(sc.machine.cpus(), 2);
  ASSERT_TRUE(sc.host.has_value());
  EXPECT_EQ(sc.host->scheduler, scenario::HostSpec::Scheduler::eevdf);
  EXPECT_EQ(sc.host->tick_ns, 4'000'000);
  EXPECT_EQ(sc.host->sched_base_slice_ns, 1'500'000);
  EXPECT_FALSE(sc.host->kvm.ple);
  EXPECT_FALSE(sc.host->kvm.steal_time);
  EXPECT_EQ(sc.host->kvm.halt_poll_ns, 0);
  EXPECT_EQ(sc.host->housekeeping_ns, 0);
  ASSERT_EQ(sc.vms.size(), 1U);
  EXPECT_EQ(sc.vms[0].vcpus, 8);
  EXPECT_EQ(sc.vms[0].placement, scenario::VmSpec::Placement::floating);
  EXPECT_EQ(sc.vms[0].guest.lock_name, "mutex");
  EXPECT_FALSE(sc.vms[0].guest.policies.owner_spin.spin_on_owner);
  EXPECT_DOUBLE_EQ(sc.costs.xfer_socket_ns, 70);
  EXPECT_DOUBLE_EQ(sc.costs.vcpu_switch_ns, 3000);
  EXPECT_DOUBLE_EQ(sc.costs.host_wake_idle_ns, 25000);
  EXPECT_DOUBLE_EQ(sc.costs.hypercall_ns, 2500);
  EXPECT_DOUBLE_EQ(sc.costs.hlt_exit_ns, 350);
  SimSettings noisy = tiny_sim();
  noisy.steal_as_noise = true;
  const scenario::Scenario sn = twin_scenario(fake_calibration(), find_twin("tas"), 2, {}, noisy);
  EXPECT_EQ(sn.host->housekeeping_ns, calibrate::steal_noise_burst_ns(0.05));
  SimSettings loaded = tiny_sim();
  loaded.background_threads = 3;
  EXPECT_EQ(twin_scenario(fake_calibration(), find_twin("tas"), 2, {}, loaded).host->stress_threads,
            3);
}

TEST(TwinSummary, CollapseAndCorrelation) {
  std::vector<TwinCell> cells;
  const auto add = [&](const char* lock, int n, double m, double p) {
    TwinCell c;
    c.lock = lock;
    c.threads = n;
    c.measured_ops_s = m;
    c.predicted_ops_s = p;
    c.steal_fraction = 0.02;
    cells.push_back(c);
  };
  add("a", 2, 100, 200);
  add("a", 8, 10, 10);
  add("b", 2, 50, 60);
  add("b", 8, 40, 30);
  const TwinSummary s = summarize_cells(cells, 2);
  ASSERT_TRUE(s.rank_correlation);
  ASSERT_EQ(s.collapse.size(), 2U);
  EXPECT_DOUBLE_EQ(*s.collapse[0].measured, 0.1);
  EXPECT_DOUBLE_EQ(*s.collapse[0].predicted, 0.05);
  EXPECT_TRUE(s.collapse[0].within_2x());  // exactly a factor 2
  EXPECT_DOUBLE_EQ(*s.collapse[1].measured, 0.8);
  EXPECT_DOUBLE_EQ(*s.collapse[1].predicted, 0.5);
  EXPECT_EQ(s.collapse_within_2x, 2);
  EXPECT_DOUBLE_EQ(s.mean_steal, 0.02);
  // Without a 4x-cores cell there is no collapse factor, and it does not count as within.
  const TwinSummary t = summarize_cells({cells[0], cells[2]}, 2);
  EXPECT_FALSE(t.collapse[0].measured);
  EXPECT_EQ(t.collapse_within_2x, 0);
}

TEST(TwinPipeline, TinyRunEndToEnd) {
  TwinOptions o;
  o.locks = {"tas", "mutex"};
  o.threads = {1, 2};
  o.native_s = 0.01;
  o.sim = tiny_sim();
  o.sim_jobs = 2;
  o.background_window_s = 0.01;
  o.background_as_stress = true;
  int lines = 0;
  const TwinResult r = run_twin(fake_calibration(), o, [&](const std::string&) { ++lines; });
  ASSERT_EQ(r.cells.size(), 4U);
  EXPECT_EQ(lines, 8);  // one native and one simulated line per cell
  for (const TwinCell& c : r.cells) {
    // A loaded machine may give a 10 ms native cell no CPU at all: no bound on what ran.
    EXPECT_GE(c.measured_ops_s, 0) << c.lock << " x" << c.threads;
    EXPECT_GT(c.predicted_ops_s, 0) << c.lock << " x" << c.threads;
    EXPECT_FALSE(c.sim_stuck);
  }
  const nlohmann::ordered_json j = to_json(r);
  EXPECT_EQ(j.at("cells").size(), 4U);
  EXPECT_TRUE(j.at("cells").at(0).contains("ratio"));
  EXPECT_TRUE(j.at("summary").contains("rank_correlation"));
  EXPECT_EQ(j.at("summary").at("collapse").size(), 2U);
  const std::string text = table_text(r);
  EXPECT_NE(text.find("rank correlation"), std::string::npos) << text;
  // The simulation is deterministic: the same cell predicts the same throughput again.
  TwinOptions again = o;
  again.locks = {"tas"};
  again.threads = {2};
  const TwinResult r2 = run_twin(fake_calibration(), again);
  EXPECT_DOUBLE_EQ(r2.cells[0].predicted_ops_s, r.cells[1].predicted_ops_s);
}

// The twin counts how often a CPU is taken from a thread on both sides: natively the
// process's involuntary context switches, in the simulation the host's preemptions of a
// vCPU. Over-subscribed spinning threads are preempted at the tick; one thread per CPU is
// never preempted in the simulation.
TEST(TwinPipeline, CountsPreemptionsOnBothSides) {
  TwinOptions o;
  o.locks = {"ticket"};
  o.threads = {2, 4};
  o.native_s = 0.01;
  o.sim.duration_ms = 40;  // ten 4 ms ticks per CPU
  o.sim.warmup_ms = 4;
  o.background_window_s = 0;
  const TwinResult r = run_twin(fake_calibration(), o);
  ASSERT_EQ(r.cells.size(), 2U);
  EXPECT_EQ(r.cells[0].predicted_preemptions_s, 0);
  // Spinners never sleep, so only the tick preempts them: at most once per 4 ms tick on
  // each of the two CPUs (500/s, plus one tick at the window's edge), and EEVDF's 1.5 ms
  // slice has expired at most ticks.
  EXPECT_GE(r.cells[1].predicted_preemptions_s, 250) << r.cells[1].predicted_preemptions_s;
  EXPECT_LE(r.cells[1].predicted_preemptions_s, 550) << r.cells[1].predicted_preemptions_s;
  for (const TwinCell& c : r.cells) EXPECT_GE(c.measured_switches_s, 0);
  const nlohmann::ordered_json j = to_json(r);
  EXPECT_TRUE(j.at("cells").at(1).contains("measured_involuntary_switches_s"));
  EXPECT_DOUBLE_EQ(j.at("cells").at(1).at("predicted_preemptions_s").get<double>(),
                   r.cells[1].predicted_preemptions_s);
}

}  // namespace
}  // namespace pvlock::twin
