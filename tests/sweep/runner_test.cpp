// SPDX-License-Identifier: GPL-2.0-only
// run_sweep with a fake simulator: line count, resume, shards, validation before running,
// errors while running, determinism.
#include "sweep/runner.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>

#include "scenario/parse.hpp"
#include "sweep/results.hpp"
#include "sweep_test_util.hpp"

namespace pvlock::sweep {
namespace {

using testing::count_lines;
using testing::fake_run;
using testing::TempDir;

SweepOptions options(const TempDir& d, const std::string& out = "out.jsonl") {
  SweepOptions o;
  o.scenario = d.write("s.toml", testing::kScenario);
  o.varies = {parse_vary("vm[0].guest.lock=tas,mcs"), parse_vary("vm[0].count=1,2,3")};
  o.seeds = 3;
  o.jobs = 2;
  o.out = d.file(out);
  o.progress = nullptr;
  return o;
}

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Sweep, OneLinePerPointAndSeedThenResumeAddsNone) {
  TempDir d;
  const SweepOptions o = options(d);
  const SweepStats a = run_sweep(o, fake_run);
  EXPECT_EQ(a.total, 18u);
  EXPECT_EQ(a.ran, 18u);
  EXPECT_EQ(count_lines(o.out), 18u);
  const SweepStats b = run_sweep(o, fake_run);
  EXPECT_EQ(b.skipped, 18u);
  EXPECT_EQ(b.ran, 0u);
  EXPECT_EQ(count_lines(o.out), 18u);
}

TEST(Sweep, LinesHavePointSeedResultInPointOrder) {
  TempDir d;
  const SweepOptions o = options(d);
  run_sweep(o, fake_run);
  const auto lines = read_results(o.out, false, false);
  ASSERT_EQ(lines.size(), 18u);
  EXPECT_EQ(lines[0].point.dump(), R"({"vm[0].guest.lock":"tas","vm[0].count":1})");
  EXPECT_EQ(lines[0].seed, 10u);  // run.seed of the file, then +1, +2
  EXPECT_EQ(lines[2].seed, 12u);
  EXPECT_EQ(lines[17].point.dump(), R"({"vm[0].guest.lock":"mcs","vm[0].count":3})");
  EXPECT_EQ(lines[17].result["vms"][0]["lock"], "mcs");
  EXPECT_EQ(lines[17].result["vms"][0]["score"], 12000.0 + 30 + 2);
}

TEST(Sweep, SameResultsWhateverTheJobCount) {
  TempDir d;
  SweepOptions o1 = options(d, "a.jsonl");
  o1.jobs = 1;
  SweepOptions o4 = options(d, "b.jsonl");
  o4.jobs = 4;
  run_sweep(o1, fake_run);
  run_sweep(o4, fake_run);
  const auto a = read_results(o1.out, false, false);
  const auto b = read_results(o4.out, false, false);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(point_key(a[i].point, a[i].seed), point_key(b[i].point, b[i].seed));
    EXPECT_EQ(comparable(a[i].result), comparable(b[i].result));
  }
}

TEST(Sweep, ResumeRunsOnlyMissingPointsAndRepairsACutLine) {
  TempDir d;
  const SweepOptions o = options(d);
  run_sweep(o, fake_run);
  // Keep 5 full lines and half of the 6th, as an interrupted run would.
  const std::string text = slurp(o.out);
  std::size_t pos = 0;
  for (int i = 0; i < 5; ++i) pos = text.find('\n', pos) + 1;
  std::ofstream(o.out, std::ios::trunc) << text.substr(0, pos + 10);
  const SweepStats st = run_sweep(o, fake_run);
  EXPECT_EQ(st.skipped, 5u);
  EXPECT_EQ(st.ran, 13u);
  EXPECT_EQ(count_lines(o.out), 18u);
  EXPECT_EQ(read_results(o.out, false, false).size(), 18u);
}

TEST(Sweep, ShardsPartitionThePoints) {
  TempDir d;
  std::set<std::string> keys;
  std::size_t lines = 0;
  for (int i = 0; i < 4; ++i) {
    SweepOptions o = options(d, "shard" + std::to_string(i) + ".jsonl");
    o.shard_index = i;
    o.shard_count = 4;
    run_sweep(o, fake_run);
    for (const auto& l : read_results(o.out, false, false)) {
      keys.insert(point_key(l.point, l.seed));
      ++lines;
    }
  }
  EXPECT_EQ(lines, 18u);
  EXPECT_EQ(keys.size(), 18u);
}

TEST(Sweep, ParseShard) {
  EXPECT_EQ(parse_shard("1/4"), (std::pair<int, int>{1, 4}));
  EXPECT_THROW(parse_shard("4/4"), SweepError);
  EXPECT_THROW(parse_shard("-1/4"), SweepError);
  EXPECT_THROW(parse_shard("1/0"), SweepError);
  EXPECT_THROW(parse_shard("x"), SweepError);
}

TEST(Sweep, BadValueIsRejectedBeforeAnyPointRuns) {
  TempDir d;
  SweepOptions o = options(d);
  o.varies.push_back(parse_vary("vm[0].vcpus=2,0"));
  std::atomic<int> runs{0};
  try {
    run_sweep(o, [&](const scenario::Scenario& sc) {
      ++runs;
      return fake_run(sc);
    });
    FAIL() << "no error";
  } catch (const SweepError& e) {
    EXPECT_STREQ(e.what(), "--set vm[0].vcpus=0: must be between 1 and 1024, got 0");
  }
  EXPECT_EQ(runs.load(), 0);
  EXPECT_FALSE(std::filesystem::exists(o.out));
}

TEST(Sweep, BadKeyIsRejectedBeforeAnyPointRuns) {
  TempDir d;
  SweepOptions o = options(d);
  o.varies = {parse_vary("vm[0].cont=1,2")};
  try {
    run_sweep(o, fake_run);
    FAIL() << "no error";
  } catch (const SweepError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--set vm[0].cont=1: unknown key 'cont' in [[vm]]", 0),
              0u)
        << e.what();
  }
}

TEST(Sweep, ScenarioErrorWhileRunningStopsTheSweep) {
  TempDir d;
  SweepOptions o = options(d);
  o.jobs = 1;
  try {
    run_sweep(o, [](const scenario::Scenario& sc) -> nlohmann::ordered_json {
      if (sc.vms[0].count == 2) throw scenario::ScenarioError("s.toml:11:1: vm[0].workload: bad");
      return fake_run(sc);
    });
    FAIL() << "no error";
  } catch (const SweepError& e) {
    EXPECT_STREQ(e.what(),
                 "point vm[0].guest.lock=tas vm[0].count=2 seed=10: s.toml:11:1: vm[0].workload: "
                 "bad");
  }
  EXPECT_EQ(count_lines(o.out), 3u);  // the points before it
}

TEST(Sweep, OptionErrors) {
  TempDir d;
  SweepOptions o = options(d);
  o.seeds = 0;
  EXPECT_THROW(run_sweep(o, fake_run), SweepError);
  o = options(d);
  o.jobs = 0;
  EXPECT_THROW(run_sweep(o, fake_run), SweepError);
  o = options(d);
  o.scenario = d.file("missing.toml");
  EXPECT_THROW(run_sweep(o, fake_run), SweepError);
}

}  // namespace
}  // namespace pvlock::sweep
