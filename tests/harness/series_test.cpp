// SPDX-License-Identifier: GPL-2.0-only
// The run's time series (harness/series.hpp): sampling changes nothing, rows add up to the
// measured window's totals, and the interval that spans the warm-up reset stays whole.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::sim {
namespace {

// Two 8-vCPU VMs on 4 pCPUs contending one lock: PV waiters halt and are kicked, spinners
// take PLE exits and vCPUs are preempted, so every host column has something to count.
const char* kOvercommit = R"(
[run]
duration_ms = 20
warmup_ms = 6
seed = 7
watchdog_ms = 0
[machine]
sockets = 1
cores_per_socket = 4
threads_per_core = 1
[host]
scheduler = "cfs"
[host.kvm]
irq_boost = true
kick_boost = true
[[vm]]
name = "vm"
count = 2
vcpus = 8
[vm.guest]
lock = "pvqspinlock"
[vm.workload]
type = "lockloop"
compute_ns = 2000
hold_ns = 500
)";

nlohmann::ordered_json without(nlohmann::ordered_json j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) j.erase(k);
  return j;
}

std::size_t column(const nlohmann::ordered_json& series, const std::string& name) {
  const auto& cols = series.at("columns");
  for (std::size_t i = 0; i < cols.size(); ++i)
    if (cols[i].at("name") == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

// Sum over the rows ending after `from_ms` of rate x interval: the count in that span.
double count_after(const nlohmann::ordered_json& rows, std::size_t col, double from_ms) {
  double sum = 0, prev_t = 0;
  for (const auto& r : rows) {
    const double t = r.at(0).get<double>();
    if (t > from_ms) sum += r.at(col).get<double>() * (t - prev_t) * 1e-3;
    prev_t = t;
  }
  return sum;
}

TEST(Series, SamplingChangesNoResultAndIsDeterministic) {
  const auto sc = scenario::parse_scenario(kOvercommit, "series.toml", {});
  const auto plain = harness::run_to_json(sc);
  const auto a = harness::run_to_json(sc, nullptr, 3'000'000);
  const auto b = harness::run_to_json(sc, nullptr, 3'000'000);
  EXPECT_EQ(without(plain, {"perf"}), without(a, {"perf", "series"}));
  EXPECT_EQ(a.at("series"), b.at("series"));
  EXPECT_FALSE(plain.contains("series"));
}

TEST(Series, RowsCoverTheRunAndAddUpToTheMeasuredTotals) {
  // 2 ms rows: the warm-up (6 ms) ends on a row boundary.
  const auto j = harness::run_to_json(scenario::parse_scenario(kOvercommit, "series.toml", {}),
                                      nullptr, 2'000'000);
  const auto& s = j.at("series");
  EXPECT_EQ(s.at("interval_ns"), 2'000'000);
  ASSERT_EQ(s.at("vms").size(), 2u);
  // Each column's total over both VMs: one VM alone may see no kick or yield in 14 ms (this
  // small guest switches between a spinning and a halting regime), the pair always does.
  std::map<std::string, double> both;
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& vm = j.at("vms").at(k);
    const auto& ser = s.at("vms").at(vm.at("name").get<std::string>());
    EXPECT_EQ(ser.at("score_unit"), "ops/s");
    const auto& rows = ser.at("rows");
    ASSERT_EQ(rows.size(), 13u);  // 26 ms of run
    EXPECT_DOUBLE_EQ(rows.back().at(0).get<double>(), 26.0);
    EXPECT_NEAR(count_after(rows, column(s, "score"), 6.0), vm.at("ops").get<double>(), 1e-6);
    const auto& h = vm.at("host");
    for (const auto& [col, total] : std::vector<std::pair<std::string, double>>{
             {"ple_exits", h.at("exits").at("ple").get<double>()},
             {"ple_yields", h.at("ple_yields").at("done").get<double>()},
             {"kicks", h.at("kicks").get<double>()},
             {"kick_yields", h.at("kick_yields").at("done").get<double>()},
             {"halt_blocks", h.at("halt_blocks").get<double>()},
             {"preemptions", h.at("preemptions").get<double>()}}) {
      EXPECT_NEAR(count_after(rows, column(s, col), 6.0), total, 1e-6) << col;
      both[col] += total;
    }
  }
  for (const auto& [col, total] : both)
    EXPECT_GT(total, 0) << col << ": the scenario must exercise it";
  // Guest lock events: "counters" sums both VMs.
  double early = 0;
  for (const auto& [name, ser] : s.at("vms").items())
    early += count_after(ser.at("rows"), column(s, "pv_wait_head"), 6.0) +
             count_after(ser.at("rows"), column(s, "pv_wait_node"), 6.0);
  const auto& c = j.at("counters");
  EXPECT_NEAR(early, c.at("pv_wait_head").get<double>() + c.at("pv_wait_node").get<double>(), 1e-6);
}

TEST(Series, TheIntervalAcrossTheWarmUpResetIsWhole) {
  // 4 ms rows: the row ending at 8 ms spans the reset at 6 ms. Its counts must be what the
  // cumulative counters did over 4..8 ms, which a 2 ms series of the same run shows as two
  // rows (the run is the same: sampling changes nothing).
  const auto sc = scenario::parse_scenario(kOvercommit, "series.toml", {});
  const auto j4 = harness::run_to_json(sc, nullptr, 4'000'000);
  const auto j2 = harness::run_to_json(sc, nullptr, 2'000'000);
  const auto& s4 = j4.at("series");
  const auto& s2 = j2.at("series");
  for (const char* col :
       {"score", "steal_pct", "ple_exits", "kicks", "halt_blocks", "pv_wait_node"}) {
    const std::size_t c = column(s4, col);
    const auto& r4 = s4.at("vms").at("vm0").at("rows");
    const auto& r2 = s2.at("vms").at("vm0").at("rows");
    ASSERT_DOUBLE_EQ(r4.at(1).at(0).get<double>(), 8.0);
    ASSERT_DOUBLE_EQ(r2.at(3).at(0).get<double>(), 8.0);
    const double whole = r4.at(1).at(c).get<double>();
    const double halves = (r2.at(2).at(c).get<double>() + r2.at(3).at(c).get<double>()) / 2;
    EXPECT_NEAR(whole, halves, 1e-6 * (1 + whole)) << col;
    for (const auto& row : r4) EXPECT_GE(row.at(c).get<double>(), 0.0) << col;
  }
  // A vCPU waiting across the reset: its wait counts once (at most every vCPU, all the time).
  const std::size_t steal = column(s2, "steal_pct");
  for (const auto& [vm, ser] : s2.at("vms").items())
    for (const auto& row : ser.at("rows")) EXPECT_LE(row.at(steal).get<double>(), 100.0) << vm;
}

}  // namespace
}  // namespace pvlock::sim
