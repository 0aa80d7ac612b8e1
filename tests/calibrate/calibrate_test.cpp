// SPDX-License-Identifier: GPL-2.0-only
// The calibration pipeline on tiny settings: summaries, sysfs/procfs parsing, every
// microbenchmark once, the fragment parsing as a scenario and the JSON round trip. No
// assertion on how long anything takes.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/calibration.hpp"
#include "calibrate/microbench.hpp"
#include "calibrate/spread.hpp"
#include "calibrate/system_facts.hpp"

namespace pvlock::calibrate {
namespace {

BenchSize tiny() {
  BenchSize z;
  z.reps = 2;
  z.scale = 0.01;
  z.window_s = 0.01;
  return z;
}

TEST(Spread, MedianQuartilesAndExtremes) {
  const Spread s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.reps, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p25, 2);
  EXPECT_DOUBLE_EQ(s.p75, 4);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(summarize({1, 2}).median, 1.5);
  EXPECT_EQ(summarize({}).reps, 0);
}

TEST(Spread, JsonRoundTrip) {
  const Spread s = summarize({7, 9, 8});
  const Spread t = spread_from_json(to_json(s));
  EXPECT_DOUBLE_EQ(t.median, s.median);
  EXPECT_DOUBLE_EQ(t.p75, s.p75);
  EXPECT_EQ(t.reps, 3);
}

TEST(SystemFacts, TopologyCoversTheAffinityMask) {
  const Topology t = read_topology();
  ASSERT_FALSE(t.cpus.empty());
  EXPECT_GE(t.sockets * t.cores_per_socket * t.threads_per_core,
            static_cast<int>(t.cpus.size()) / 2);
  for (const CpuTopo& c : t.cpus) EXPECT_FALSE(c.siblings.empty());
  // A pair of a class is two distinct CPUs of this machine.
  for (auto pair : {smt_pair(t), socket_pair(t), remote_pair(t)})
    if (pair) {
      EXPECT_NE(pair->a, pair->b);
    }
}

TEST(SystemFacts, PairClassesFollowTheTopology) {
  Topology t;
  t.cpus = {{0, 0, 0, {0, 1}}, {1, 0, 0, {0, 1}}, {2, 0, 1, {2}}, {3, 1, 0, {3}}};
  ASSERT_TRUE(smt_pair(t));
  EXPECT_EQ(smt_pair(t)->b, 1);
  ASSERT_TRUE(socket_pair(t));
  EXPECT_EQ(socket_pair(t)->b, 2);
  ASSERT_TRUE(remote_pair(t));
  EXPECT_EQ(remote_pair(t)->b, 3);
  t.cpus = {{0, 0, 0, {0}}};
  EXPECT_FALSE(smt_pair(t));
  EXPECT_FALSE(socket_pair(t));
  EXPECT_FALSE(remote_pair(t));
}

TEST(SystemFacts, StealFraction) {
  CpuTimes a{1000, 10, true}, b{2000, 60, true};
  EXPECT_DOUBLE_EQ(steal_fraction(a, b), 0.05);
  EXPECT_DOUBLE_EQ(steal_fraction(b, a), 0);
  EXPECT_DOUBLE_EQ(steal_fraction(CpuTimes{}, b), 0);
  EXPECT_TRUE(read_cpu_times().valid);
}

TEST(SystemFacts, KernelSchedulerFromRelease) {
  const KernelFacts k = read_kernel_facts();
  EXPECT_FALSE(k.release.empty());
  EXPECT_TRUE(k.scheduler == "eevdf" || k.scheduler == "cfs");
}

TEST(Microbench, EveryMeasurementYieldsPositiveSamples) {
  const BenchSize z = tiny();
  const Topology t = read_topology();
  const int cpu0 = t.cpus.front().cpu;
  const int cpu1 = t.cpus.size() > 1 ? t.cpus[1].cpu : cpu0;
  for (const Spread& s : {measure_l1_hit_ns(z), measure_atomic_rmw_ns(z), measure_pause_ns(z),
                          measure_context_switch_ns(z, cpu0)}) {
    EXPECT_EQ(s.reps, 2);
    EXPECT_GT(s.median, 0);
    EXPECT_LE(s.min, s.median);
    EXPECT_LE(s.median, s.max);
  }
  if (cpu1 != cpu0) {
    const Spread x = measure_line_transfer_ns(z, CpuPair{cpu0, cpu1});
    EXPECT_GE(x.reps, 2);
    EXPECT_GT(x.median, 0);
  }
  const FutexWake fw = measure_futex_wake(z, CpuPair{cpu0, cpu1});
  EXPECT_GT(fw.syscall_ns.reps, 0);
  EXPECT_GT(fw.syscall_ns.median, 0);
  // Slice and tick over a 10 ms window may see no interruption at all; they must not hang.
  (void)measure_tick(z, cpu0);
  (void)measure_slice_ns(z, cpu0);
}

Calibration fake_calibration() {
  Calibration c;
  c.topology.cpus = {{0, 0, 0, {0}}, {1, 0, 1, {1}}};
  c.topology.sockets = 1;
  c.topology.cores_per_socket = 2;
  c.kernel.release = "6.18.0";
  c.kernel.scheduler = "eevdf";
  c.kernel.config_hz = 250;
  c.kernel.config_source = "/proc/config.gz";
  c.l1_hit_ns = summarize({1.2, 1.3});
  c.atomic_rmw_ns = summarize({6, 7});
  c.pause_ns = summarize({30, 31});
  c.xfer_socket_ns = summarize({60, 80});
  c.futex_wake_to_run_ns = summarize({20000, 30000});
  c.futex_waker_ns = summarize({2000, 3000});
  c.syscall_ns = summarize({300, 400});
  c.context_switch_ns = summarize({2500, 3500});
  c.tick_interval_ns = summarize({4e6, 4e6});
  c.tick_gap_ns = summarize({3000, 5000});
  c.slice_ns = summarize({4e6, 8e6});
  c.steal_fraction = 0.1;
  return c;
}

TEST(Calibration, StatedTickAndSlice) {
  Calibration c = fake_calibration();
  EXPECT_EQ(c.tick_ns(), 4'000'000);  // CONFIG_HZ=250
  c.kernel.config_hz.reset();
  c.tick_interval_ns = summarize({3.9e6});
  EXPECT_EQ(c.tick_ns(), 3'900'000);  // measured
  // 0.75 ms x (1 + ilog2(2)) for two CPUs; debugfs, when readable, wins.
  EXPECT_EQ(c.slice_ns_value(), 1'500'000);
  c.kernel.debugfs_slice_ns = 2'800'000;
  EXPECT_EQ(c.slice_ns_value(), 2'800'000);
}

TEST(Calibration, JsonRoundTrip) {
  const Calibration c = fake_calibration();
  const Calibration d = calibration_from_json(to_json(c));
  EXPECT_EQ(d.topology.cpus.size(), 2U);
  EXPECT_EQ(d.kernel.scheduler, "eevdf");
  EXPECT_FALSE(d.xfer_smt_ns.has_value());
  ASSERT_TRUE(d.xfer_socket_ns.has_value());
  EXPECT_DOUBLE_EQ(d.xfer_socket_ns->median, 70);
  EXPECT_DOUBLE_EQ(d.context_switch_ns.median, 3000);
  EXPECT_EQ(to_json(d).dump(), to_json(c).dump());
}

TEST(Calibration, FromJsonNamesTheBadField) {
  nlohmann::json j = to_json(fake_calibration());
  j["measured_ns"].erase("pause");
  try {
    (void)calibration_from_json(j);
    FAIL() << "accepted a calibration without measured_ns.pause";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pause"), std::string::npos) << e.what();
  }
}

TEST(Calibration, FragmentStatesTheMeasurements) {
  const std::string t = to_toml(fake_calibration());
  EXPECT_NE(t.find("[machine]\nsockets = 1\ncores_per_socket = 2\nthreads_per_core = 1"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("xfer_socket_ns = 70"), std::string::npos) << t;
  EXPECT_NE(t.find("# xfer_smt_ns: no SMT siblings"), std::string::npos) << t;
  EXPECT_NE(t.find("scheduler = \"eevdf\""), std::string::npos) << t;
  EXPECT_NE(t.find("tick_ns = 4000000"), std::string::npos) << t;
  EXPECT_NE(t.find("housekeeping_ns = 0"), std::string::npos) << t;
  const std::string n = to_toml(fake_calibration(), true);
  EXPECT_NE(n.find(fmt::format("housekeeping_ns = {}", steal_noise_burst_ns(0.1))),
            std::string::npos)
      << n;
  EXPECT_EQ(steal_noise_burst_ns(0.1), 400'000);
  EXPECT_EQ(steal_noise_burst_ns(0), 0);
}

}  // namespace
}  // namespace pvlock::calibrate
