// SPDX-License-Identifier: GPL-2.0-only
// Results files: reading, merging, summaries.
#include "sweep/results.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>

#include "sweep/runner.hpp"
#include "sweep/summary.hpp"
#include "sweep_test_util.hpp"

namespace pvlock::sweep {
namespace {

using testing::fake_run;
using testing::TempDir;

std::string line(const std::string& lock, int seed, double score, int wall = 1) {
  return "{\"point\":{\"lock\":\"" + lock + "\"},\"seed\":" + std::to_string(seed) +
         ",\"result\":{\"vms\":[{\"name\":\"vm\",\"score\":" + std::to_string(score) +
         ",\"unit\":\"ops/s\"}],\"perf\":{\"wall_s\":" + std::to_string(wall) + "}}}\n";
}

TEST(Results, ReadRejectsBadLinesNamingThem) {
  TempDir d;
  const std::string p = d.write("r.jsonl", line("tas", 1, 5) + "{\"x\":1}\n");
  try {
    read_results(p, false, false);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(p + ":2: not a sweep result line", 0), 0u) << e.what();
  }
  const std::string q = d.write("q.jsonl", "nope\n");
  EXPECT_THROW(read_results(q, false, false), SweepError);
  EXPECT_THROW(read_results(d.file("missing"), false, false), SweepError);
  EXPECT_TRUE(read_results(d.file("missing"), true, false).empty());
}

TEST(Results, MergeSortsDedupsAndIgnoresPerf) {
  TempDir d;
  const std::string a = d.write("a.jsonl", line("tas", 2, 7, 1) + line("mcs", 1, 3, 1));
  const std::string b = d.write("b.jsonl", line("tas", 1, 5, 2) + line("tas", 2, 7, 9));
  EXPECT_EQ(merge_results({a, b}, d.file("all.jsonl")), 3u);
  const auto all = read_results(d.file("all.jsonl"), false, false);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].point["lock"], "mcs");
  EXPECT_EQ(all[1].seed, 1u);
  EXPECT_EQ(all[2].seed, 2u);
}

TEST(Results, MergeRejectsConflictingDuplicates) {
  TempDir d;
  const std::string a = d.write("a.jsonl", line("tas", 2, 7));
  const std::string b = d.write("b.jsonl", line("tas", 2, 8));
  EXPECT_THROW(merge_results({a, b}, d.file("all.jsonl")), SweepError);
}

TEST(Results, ShardsMergedEqualTheUnshardedRun) {
  TempDir d;
  SweepOptions o;
  o.scenario = d.write("s.toml", testing::kScenario);
  o.varies = {parse_vary("vm[0].count=1,2,3"), parse_vary("vm[0].vcpus=1,2")};
  o.seeds = 2;
  o.progress = nullptr;
  o.out = d.file("whole.jsonl");
  run_sweep(o, fake_run);
  std::vector<std::string> shards;
  for (int i = 0; i < 4; ++i) {
    SweepOptions s = o;
    s.shard_index = i;
    s.shard_count = 4;
    s.out = d.file("shard" + std::to_string(i));
    run_sweep(s, fake_run);
    shards.push_back(s.out);
  }
  merge_results(shards, d.file("merged.jsonl"));
  merge_results({o.out}, d.file("whole-sorted.jsonl"));
  const auto m = read_results(d.file("merged.jsonl"), false, false);
  const auto w = read_results(d.file("whole-sorted.jsonl"), false, false);
  ASSERT_EQ(m.size(), 12u);
  ASSERT_EQ(w.size(), 12u);
  for (std::size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(point_key(m[i].point, m[i].seed), point_key(w[i].point, w[i].seed));
    EXPECT_EQ(comparable(m[i].result), comparable(w[i].result));
  }
}

TEST(Summary, MeanStddevAndInterval) {
  std::vector<ResultLine> lines;
  for (int s = 0; s < 3; ++s) {
    ResultLine l;
    l.point = {{"lock", "tas"}};
    l.seed = static_cast<std::uint64_t>(s);
    l.result = {{"vms", {{{"name", "vm"}, {"score", 10.0 + 2 * s}, {"unit", "ops/s"}}}}};
    lines.push_back(l);
  }
  ResultLine one;
  one.point = {{"lock", "mcs"}};
  one.result = {{"vms", {{{"name", "vm"}, {"score", 4.0}, {"unit", "ops/s"}}}}};
  lines.push_back(one);
  const auto rows = summarize(lines);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].n, 3u);
  EXPECT_DOUBLE_EQ(rows[0].mean, 12);
  EXPECT_DOUBLE_EQ(rows[0].stddev, 2);
  EXPECT_NEAR(rows[0].ci_high - rows[0].mean, 4.303 * 2 / std::sqrt(3.0), 1e-9);
  EXPECT_EQ(rows[1].n, 1u);
  EXPECT_EQ(rows[1].ci_low, 4);
  EXPECT_EQ(format_csv(rows),
            "lock,vm,unit,n,mean,stddev,ci95_low,ci95_high\n"
            "tas,vm,ops/s,3,12,2,7.03132358335408,16.96867641664592\n"
            "mcs,vm,ops/s,1,4,0,4,4\n");
  const std::string table = format_table(rows);
  EXPECT_EQ(table,
            "lock  vm  n  mean  stddev        95% interval  unit\n"
            "tas   vm  3    12       2  [7.03132, 16.9687]  ops/s\n"
            "mcs   vm  1     4       0              [4, 4]  ops/s\n");
  EXPECT_NE(table.find("[7.03132, 16.9687]"), std::string::npos) << table;
}

// Two seeds far apart: the t interval of a score reaches below 0, and the table says what
// that means instead of printing a negative throughput bound without comment.
TEST(Summary, IntervalBelowZeroIsExplained) {
  std::vector<ResultLine> lines;
  for (double score : {1.0, 9.0}) {
    ResultLine l;
    l.point = {{"lock", "tas"}};
    l.seed = static_cast<std::uint64_t>(score);
    l.result = {{"vms", {{{"name", "vm0"}, {"score", score}, {"unit", "ops/s"}}}}};
    lines.push_back(l);
  }
  const auto rows = summarize(lines);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_LT(rows[0].ci_low, 0);
  const std::string table = format_table(rows);
  EXPECT_NE(table.find(fmt::format("[{:.6g}, {:.6g}]*", rows[0].ci_low, rows[0].ci_high)),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("* the 95% interval reaches below 0, which a score cannot"),
            std::string::npos)
      << table;
  // Intervals above 0 carry no mark and no footnote.
  lines[1].result["vms"][0]["score"] = 1.1;
  EXPECT_EQ(format_table(summarize(lines)).find('*'), std::string::npos);
}

TEST(Summary, ResultWithoutVmsIsAnError) {
  ResultLine l;
  l.point = nlohmann::ordered_json::object();
  l.result = {{"x", 1}};
  EXPECT_THROW(summarize({l}), SweepError);
}

TEST(Summary, TQuantiles) {
  EXPECT_DOUBLE_EQ(t975(1), 12.706);
  EXPECT_DOUBLE_EQ(t975(30), 2.042);
  EXPECT_DOUBLE_EQ(t975(1000), 1.960);
}

}  // namespace
}  // namespace pvlock::sweep
