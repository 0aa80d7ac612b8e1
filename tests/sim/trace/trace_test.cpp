// SPDX-License-Identifier: GPL-2.0-only
// The Perfetto/Chrome JSON trace: format (phases, µs timestamps, metadata), per-track order,
// the window, the instant events of a PV scenario, and byte-identical output per seed.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/run.hpp"
#include "scenario/parse.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {
namespace {

// 2 VMs x 16 vCPUs of pvqspinlock lockloop on 8 pCPUs: waiters halt, get kicked, vCPUs are
// preempted by the host.
const char* kPv = R"(
[run]
duration_ms = 20
warmup_ms = 2
seed = 3
[machine]
sockets = 1
cores_per_socket = 8
threads_per_core = 1
[host]
scheduler = "cfs"
[[vm]]
name = "vm"
count = 2
vcpus = 16
[vm.guest]
lock = "pvqspinlock"
spin_threshold = 64
[vm.workload]
type = "lockloop"
compute_ns = { dist = "exp", mean = 2000 }
hold_ns = 1000
)";

std::string traced(trace::Window w, const std::vector<std::string>& overrides = {}) {
  trace::Tracer tr(w);
  harness::run_to_json(scenario::parse_scenario(kPv, "trace_test.toml", overrides), &tr);
  std::ostringstream out;
  tr.write(out);
  return out.str();
}

trace::Window window(double a, double b) {
  return trace::parse_window(std::to_string(a) + ":" + std::to_string(b));
}

TEST(Trace, WindowParsing) {
  const trace::Window w = trace::parse_window("0.1:0.12");
  EXPECT_EQ(w.start, 100'000'000);
  EXPECT_EQ(w.end, 120'000'000);
  for (const char* bad : {"", "0.1", "0.1-0.2", "a:b", "0.2:0.1", "0.1:0.1", "-1:2", "1:2:3",
                          "0.1:", ":0.2", "0.1:0.2x"})
    EXPECT_THROW(trace::parse_window(bad), std::invalid_argument) << bad;
}

TEST(Trace, ValidChromeFormatOrderedPerTrack) {
  const trace::Window w = window(0.004, 0.010);
  const auto j = nlohmann::json::parse(traced(w));
  ASSERT_TRUE(j.contains("traceEvents"));
  EXPECT_EQ(j.at("displayTimeUnit"), "ns");
  const double lo = 4000.0, hi = 10000.0;  // µs
  std::set<std::string> names;
  std::set<std::string> processes;
  std::map<std::pair<int, int>, double> slice_end;  // per track: end of the last slice
  std::map<std::pair<int, int>, double> last_ts;
  std::size_t slices = 0;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph");
    ASSERT_TRUE(ph == "M" || ph == "X" || ph == "i") << e.dump();
    const auto track = std::make_pair(e.at("pid").get<int>(), e.at("tid").get<int>());
    if (ph == "M") {
      if (e.at("name") == "process_name") processes.insert(e.at("args").at("name"));
      continue;
    }
    const double ts = e.at("ts").get<double>();
    // Timestamps in µs inside the window (the run is 22 ms: ns would be far beyond it).
    EXPECT_GE(ts, lo - 1e-9) << e.dump();
    EXPECT_LT(ts, hi) << e.dump();
    EXPECT_GE(ts, last_ts[track]) << "not monotonic: " << e.dump();
    last_ts[track] = ts;
    names.insert(e.at("name").get<std::string>());
    if (ph == "X") {
      const double dur = e.at("dur").get<double>();
      EXPECT_GT(dur, 0) << e.dump();
      EXPECT_LE(ts + dur, hi + 1e-6) << "slice not clipped to the window: " << e.dump();
      // Slices of one track never overlap (one state at a time).
      EXPECT_GE(ts + 1e-6, slice_end[track]) << "overlap: " << e.dump();
      slice_end[track] = ts + dur;
      ++slices;
    } else {
      EXPECT_EQ(e.at("s"), "t");
    }
  }
  EXPECT_GT(slices, 100u);
  EXPECT_EQ(processes.size(), 3u);  // host + 2 VMs
  // The PV mechanisms show up as instants and states.
  for (const char* n : {"pv_kick", "halt", "preempt", "halted (pv_wait)", "preempted"})
    EXPECT_TRUE(names.count(n)) << "missing " << n;
  bool spin = false, vcpu_on_pcpu = false;
  for (const auto& n : names) {
    spin = spin || n.rfind("spin: ", 0) == 0;
    vcpu_on_pcpu = vcpu_on_pcpu || n.rfind("vm0/vcpu", 0) == 0;
  }
  EXPECT_TRUE(spin);
  EXPECT_TRUE(vcpu_on_pcpu);
}

TEST(Trace, WaitEarlyNamesThePredecessor) {
  // The 2017 rule (halt early if prev is halted or preempted) on an over-committed host.
  const auto j = nlohmann::json::parse(
      traced(window(0.002, 0.022), {"vm[0].guest.wait_early=prev_halted_or_preempted"}));
  std::size_t early = 0;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") != "i" || e.at("name") != "pv_wait_early") continue;
    ++early;
    const auto& a = e.at("args");
    // The predecessor is another vCPU of the same VM, seen halted, preempted or running.
    const std::string prev = a.at("prev");
    EXPECT_EQ(prev.rfind(e.at("pid") == 2 ? "vm0/vcpu" : "vm1/vcpu", 0), 0u) << e.dump();
    EXPECT_NE(prev, (e.at("pid") == 2 ? "vm0/vcpu" : "vm1/vcpu") +
                        std::to_string(e.at("tid").get<int>() - 1));
    const std::string d = a.at("detail");
    EXPECT_TRUE(d == "halted" || d == "preempted" || d == "running") << d;
  }
  EXPECT_GT(early, 0u);
}

TEST(Trace, WindowBoundsTheSize) {
  const std::string small = traced(window(0.005, 0.006));
  const std::string large = traced(window(0.002, 0.012));
  EXPECT_LT(small.size() * 3, large.size());
}

TEST(Trace, ByteIdenticalForTheSameSeed) {
  const trace::Window w = window(0.003, 0.008);
  const std::string a = traced(w);
  EXPECT_EQ(a, traced(w));
  EXPECT_NE(a, traced(w, {"run.seed=4"}));
}

TEST(Trace, TracingDoesNotChangeTheRun) {
  const auto sc = scenario::parse_scenario(kPv, "trace_test.toml", {});
  auto plain = harness::run_to_json(sc);
  trace::Tracer tr(window(0.004, 0.006));
  auto with = harness::run_to_json(sc, &tr);
  plain.erase("perf");
  with.erase("perf");
  EXPECT_EQ(plain.dump(), with.dump());
}

}  // namespace
}  // namespace pvlock::sim
