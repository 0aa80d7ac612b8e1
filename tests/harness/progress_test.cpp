// SPDX-License-Identifier: GPL-2.0-only
// Progress of a run (harness/progress.hpp): watching a run changes none of its results, a
// cancelled run stops with Interrupted and its trace up to then is complete JSON.
#include "harness/progress.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/run.hpp"
#include "scenario/parse.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::harness {
namespace {

const char* kScenario = R"(
[run]
duration_ms = 10
warmup_ms = 2
seed = 3
[machine]
cores_per_socket = 4
[host]
[[vm]]
name = "vm"
count = 2
vcpus = 4
[vm.guest]
lock = "pvqspinlock"
[vm.workload]
type = "lockloop"
compute_ns = 2000
hold_ns = 500
)";

nlohmann::ordered_json no_perf(nlohmann::ordered_json j) {
  j.erase("perf");
  return j;
}

TEST(Progress, WatchingARunChangesNoResult) {
  const auto sc = scenario::parse_scenario(kScenario, "inline.toml");
  std::atomic<bool> never{false};
  ProgressOptions o;
  o.out = std::tmpfile();
  o.cancel = &never;
  const auto plain = run_to_json(sc);
  const auto watched = run_to_json(sc, nullptr, 0, &o);
  EXPECT_EQ(no_perf(plain), no_perf(watched));
  // With a time series too: the progress rides on the series' samples.
  EXPECT_EQ(no_perf(run_to_json(sc, nullptr, 1'000'000)),
            no_perf(run_to_json(sc, nullptr, 1'000'000, &o)));
  std::fclose(o.out);
}

TEST(Progress, CancelStopsTheRunWithAValidTrace) {
  const auto sc = scenario::parse_scenario(kScenario, "inline.toml");
  std::atomic<bool> cancel{true};
  ProgressOptions o;
  o.cancel = &cancel;
  sim::trace::Tracer tracer{sim::trace::Window{}};
  o.tracer = &tracer;
  try {
    (void)run_to_json(sc, &tracer, 0, &o);
    FAIL() << "a cancelled run returned a result";
  } catch (const Interrupted& e) {
    EXPECT_GT(e.at, 0);
    EXPECT_LT(e.at, e.end);
    EXPECT_EQ(e.end, 12'000'000);
    tracer.finish(e.at);
  }
  std::ostringstream out;
  tracer.write(out);
  const auto j = nlohmann::json::parse(out.str());  // throws if it is not JSON
  EXPECT_GT(j.at("traceEvents").size(), 0u);
}

TEST(Progress, WallDurationsReadAsTime) {
  EXPECT_EQ(format_wall_duration(42.2), "42 s");
  EXPECT_EQ(format_wall_duration(200), "3 min 20 s");
  EXPECT_EQ(format_wall_duration(7500), "2 h 05 min");
  EXPECT_EQ(format_wall_duration(-1), "?");
}

}  // namespace
}  // namespace pvlock::harness
