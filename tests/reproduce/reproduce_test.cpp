// SPDX-License-Identifier: GPL-2.0-only
// The reproduce machinery without the simulator: experiment files, tolerance bands,
// metric extraction and agreement, with a fake runner.
#include "reproduce/reproduce.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>

#include "reproduce/uncertainty.hpp"

namespace pvlock::reproduce {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("pvlock-repro-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text;
  }
  static inline int counter = 0;
};

const char* kGood = R"(id = "seedX"
seed_file = "x.txt"
title = "t"
claim = "c"
[quick]
set = ["run.duration_ms=10"]
[[cell]]
name = "a"
scenario = "s.toml"
published = 100
unit = "ops/s"
[[cell]]
name = "b"
scenario = "s.toml"
set = ["guest.lock=tas"]
published_low = 190
published_high = 210
unit = "ops/s"
[[effect]]
name = "b over a"
numerator = "b"
denominator = "a"
)";

TEST(Tolerance, LargeRatiosWithinFactorOnePointThree) {
  const Effect e;
  const Band b = tolerance_band(2.0, e);
  EXPECT_DOUBLE_EQ(b.low, 2.0 / 1.3);
  EXPECT_DOUBLE_EQ(b.high, 2.6);
  const Band inv = tolerance_band(0.5, e);
  EXPECT_DOUBLE_EQ(inv.low, 0.5 / 1.3);
  EXPECT_DOUBLE_EQ(inv.high, 0.65);
}

TEST(Tolerance, SmallRatiosAThirdOfTheSizeSameDirectionPlusFifteenPercent) {
  const Effect e;
  const Band b = tolerance_band(1.06, e);  // seed 001's +6 %
  EXPECT_DOUBLE_EQ(b.low, 1.02);
  EXPECT_DOUBLE_EQ(b.high, 1.21);
  const Band d = tolerance_band(0.9, e);
  EXPECT_DOUBLE_EQ(d.low, 0.75);
  EXPECT_DOUBLE_EQ(d.high, 1.0 - 0.1 / 3);
}

TEST(Tolerance, ExplicitBandWins) {
  Effect e;
  e.low = 1.002;
  e.high = 1.03;
  const Band b = tolerance_band(1.0097, e);
  EXPECT_DOUBLE_EQ(b.low, 1.002);
  EXPECT_DOUBLE_EQ(b.high, 1.03);
}

TEST(Experiment, LoadsCellsEffectsAndRanges) {
  TempDir d;
  d.write("e/experiment.toml", kGood);
  d.write("e/s.toml", "");
  const auto exps = load_experiments(d.path.string());
  ASSERT_EQ(exps.size(), 1u);
  const Experiment& ex = exps[0];
  EXPECT_EQ(ex.id, "seedX");
  ASSERT_EQ(ex.cells.size(), 2u);
  EXPECT_DOUBLE_EQ(*ex.cells[1].published, 200.0);  // midpoint of the published range
  EXPECT_EQ(ex.cells[1].overrides, std::vector<std::string>{"guest.lock=tas"});
  EXPECT_EQ(ex.quick_overrides, std::vector<std::string>{"run.duration_ms=10"});
  ASSERT_EQ(ex.effects.size(), 1u);
}

// Loading experiment folder e/ with `text` fails with an error naming the file and `want`.
void expect_load_error(const std::string& text, const std::string& want) {
  TempDir d;
  d.write("e/experiment.toml", text);
  d.write("e/s.toml", "");
  try {
    load_experiments(d.path.string());
    ADD_FAILURE() << "expected an error: " << want;
  } catch (const ExperimentError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("experiment.toml:"), std::string::npos) << msg;
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
  }
}

TEST(Experiment, ErrorsNameFileLineAndKey) {
  std::string bad = kGood;
  bad.replace(bad.find("denominator = \"a\""), 17, "denominator = \"zz\"");
  expect_load_error(bad, "effect[0].denominator: no cell named 'zz'");
}

TEST(Experiment, UnknownKeyAndMissingScenarioAreErrors) {
  TempDir d;
  d.write("e/experiment.toml", std::string(kGood) + "bogus = 1\n");
  d.write("e/s.toml", "");
  EXPECT_THROW(load_experiments(d.path.string()), ExperimentError);
  TempDir d2;
  d2.write("e/experiment.toml", kGood);  // s.toml missing
  EXPECT_THROW(load_experiments(d2.path.string()), ExperimentError);
}

// Writes experiment folder e/ with `text` and an empty scenario, and loads it.
std::vector<Experiment> load_one(const TempDir& d, const std::string& text = kGood) {
  d.write("e/experiment.toml", text);
  d.write("e/s.toml", "");
  return load_experiments(d.path.string());
}

// kGood averaging every cell over `n` seeds (`seeds = n` before [quick]).
std::string with_seeds(int n) {
  std::string text = kGood;
  text.replace(text.find("[quick]"), 0, "seeds = " + std::to_string(n) + "\n");
  return text;
}

// What `pvlock run --json` would print for one VM with this score.
nlohmann::ordered_json run_with_score(double score) {
  nlohmann::ordered_json run;
  run["vms"] = {{{"name", "m"}, {"score", score}, {"unit", "ops/s"}}};
  return run;
}

bool has(const std::vector<std::string>& overrides, const std::string& o) {
  return std::find(overrides.begin(), overrides.end(), o) != overrides.end();
}

// A fake scenario runner that records every call's overrides (cells run in parallel).
struct RecordingRunner {
  std::mutex mu;
  std::vector<std::vector<std::string>> seen;
  Runner scoring(std::function<double(const std::vector<std::string>&)> score) {
    return [this, score](const std::string&, const std::vector<std::string>& overrides) {
      {
        std::lock_guard g(mu);
        seen.push_back(overrides);
      }
      return run_with_score(score(overrides));
    };
  }
};

TEST(Reproduce, ComparesSimulatedRatiosWithBands) {
  TempDir d;
  const auto exps = load_one(d);
  RecordingRunner rec;
  const Runner runner =
      rec.scoring([](const auto& ov) { return has(ov, "guest.lock=tas") ? 230.0 : 100.0; });
  Options o;
  o.quick = true;
  o.jobs = 2;
  const auto results = run_experiments(exps, o, runner);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(rec.seen.size(), 2u);
  for (const auto& ov : rec.seen) EXPECT_EQ(ov.front(), "run.duration_ms=10");  // quick first
  ASSERT_EQ(results[0].effects.size(), 1u);
  const EffectResult& e = results[0].effects[0];
  EXPECT_DOUBLE_EQ(*e.published, 2.0);
  EXPECT_DOUBLE_EQ(e.simulated, 2.3);
  EXPECT_TRUE(e.agrees);
  EXPECT_TRUE(all_agree(results));
  const auto j = to_json(results, 1.0);
  EXPECT_EQ(j["experiments"][0]["effects"][0]["agrees"], true);
  EXPECT_EQ(e.se, 0.0);  // one run per cell: nothing to propagate
  EXPECT_TRUE(e.resolved);
  EXPECT_EQ(j["experiments"][0]["effects"][0]["resolved"], true);
  EXPECT_NE(to_table(results).find("b over a"), std::string::npos);
  EXPECT_EQ(to_table(results).find("(noise)"), std::string::npos);
  EXPECT_NE(to_table(results).find("1 of 1 effects agree with their bands (0 of the 1 verdicts "
                                   "are noise)"),
            std::string::npos);
  EXPECT_EQ(j["summary"]["effects"], 1);
  EXPECT_EQ(j["summary"]["agree"], 1);
  EXPECT_EQ(j["summary"]["noise"], 0);
}

TEST(Reproduce, ExtraOverridesComeLastInEveryCell) {
  TempDir d;
  const auto exps = load_one(d);
  RecordingRunner rec;
  Options o;
  o.quick = true;
  o.extra_overrides = {"host.housekeeping_interval_ns=0", "run.seed=7"};
  run_experiments(exps, o, rec.scoring([](const auto&) { return 100.0; }));
  ASSERT_EQ(rec.seen.size(), 2u);
  for (const auto& ov : rec.seen) {
    ASSERT_GE(ov.size(), 3u);
    EXPECT_EQ(ov.front(), "run.duration_ms=10");
    EXPECT_EQ(ov[ov.size() - 2], "host.housekeeping_interval_ns=0");  // after the cell's own
    EXPECT_EQ(ov.back(), "run.seed=7");
  }
}

TEST(Reproduce, AStuckRunIsMarkedNotANumber) {
  TempDir d;
  const auto exps = load_one(d);
  Runner runner = [&](const std::string&, const std::vector<std::string>& overrides) {
    nlohmann::ordered_json run = run_with_score(100.0);
    if (has(overrides, "guest.lock=tas"))
      run["liveness"] = {{"at_ns", 5000000}, {"reason", "no progress for 5 ms"}};
    return run;
  };
  const auto results = run_experiments(exps, Options{}, runner);
  EXPECT_TRUE(any_stuck(results));
  EXPECT_FALSE(all_agree(results));
  const std::string table = to_table(results);
  EXPECT_NE(table.find("STUCK"), std::string::npos) << table;
  EXPECT_NE(table.find("liveness watchdog at 5000000 ns: no progress for 5 ms"), std::string::npos)
      << table;
  const auto j = to_json(results, 1.0);
  bool marked = false;
  for (const auto& c : j["experiments"][0]["cells"]) marked = marked || c.contains("stuck");
  EXPECT_TRUE(marked);
}

TEST(Reproduce, SeedsAverageEveryCellOverRunSeeds) {
  TempDir d;
  std::string text = with_seeds(3);
  const auto exps = load_one(d, text);
  ASSERT_EQ(exps.at(0).seeds, 3);
  RecordingRunner rec;
  const Runner runner = rec.scoring([](const std::vector<std::string>& ov) {
    const std::string& last = ov.back();
    EXPECT_EQ(last.rfind("run.seed=", 0), 0u);
    return (has(ov, "guest.lock=tas") ? 200.0 : 100.0) + 10.0 * std::stoi(last.substr(9));
  });
  Options o;
  o.jobs = 3;
  const auto results = run_experiments(exps, o, runner);
  EXPECT_EQ(rec.seen.size(), 6u);  // 2 cells x 3 seeds
  const auto& cells = results.at(0).cells;
  EXPECT_DOUBLE_EQ(cells.at(0).simulated, 120.0);  // mean of 110, 120, 130
  EXPECT_DOUBLE_EQ(cells.at(1).simulated, 220.0);
  EXPECT_DOUBLE_EQ(cells.at(0).simulated_sd, 10.0);
  EXPECT_EQ(cells.at(0).seeds, 3);
  const auto j = to_json(results, 1.0);
  EXPECT_EQ(j["experiments"][0]["cells"][0]["seeds"], 3);
  // Every seed's figure, in seed order, so that a bimodal cell shows itself.
  EXPECT_EQ(cells.at(0).per_seed, (std::vector<double>{110.0, 120.0, 130.0}));
  EXPECT_EQ(j["experiments"][0]["cells"][1]["per_seed"].dump(), "[210.0,220.0,230.0]");
  const std::string table = to_table(results);
  EXPECT_NE(table.find("mean of 3 seeds"), std::string::npos);
  EXPECT_NE(table.find("min 110"), std::string::npos);
  EXPECT_NE(table.find("max 130"), std::string::npos);
}

TEST(Reproduce, FirstSeedRunsAnotherSampleOfTheSameCells) {
  // reproduce --first-seed K: every cell runs seeds K .. K+N-1, and the output names them.
  TempDir d;
  std::string text = with_seeds(3);
  const auto exps = load_one(d, text);
  RecordingRunner rec;
  const Runner runner = rec.scoring([](const std::vector<std::string>& ov) {
    const std::string& last = ov.back();
    return (has(ov, "guest.lock=tas") ? 200.0 : 100.0) + 10.0 * std::stoi(last.substr(9));
  });
  Options o;
  o.first_seed = 7;
  o.explain = true;
  const auto results = run_experiments(exps, o, runner);
  EXPECT_EQ(rec.seen.size(), 6u);
  for (const auto& ov : rec.seen) {
    const std::string& last = ov.back();
    EXPECT_TRUE(last == "run.seed=7" || last == "run.seed=8" || last == "run.seed=9") << last;
  }
  const auto& cell = results.at(0).cells.at(0);
  EXPECT_EQ(cell.per_seed, (std::vector<double>{170.0, 180.0, 190.0}));  // seeds 7, 8, 9
  EXPECT_EQ(cell.first_seed, 7);
  EXPECT_EQ(to_json(results, 1.0)["experiments"][0]["cells"][0]["first_seed"], 7);
  // --explain describes the sample's first run, and says which seed that was.
  const Runner explained = [](const std::string&, const std::vector<std::string>& ov) {
    nlohmann::ordered_json run = run_with_score(100.0);
    run["measured_ns"] = 1000000000;
    run["host"] = {{"steal_pct", has(ov, "run.seed=7") ? 7.0 : 90.0}};
    return run;
  };
  const std::string table = to_table(run_experiments(exps, o, explained));
  EXPECT_NE(table.find("why, a (seed 7):\n      steal 7%"), std::string::npos) << table;
  // The default sample starts at seed 1 and says nothing about it in the JSON.
  const auto usual = run_experiments(exps, Options{}, runner);
  EXPECT_EQ(usual.at(0).cells.at(0).per_seed, (std::vector<double>{110.0, 120.0, 130.0}));
  EXPECT_FALSE(to_json(usual, 1.0)["experiments"][0]["cells"][0].contains("first_seed"));
  // An experiment without seeds runs its scenario's own seed, unless a first seed is given.
  TempDir d1;
  std::string one = with_seeds(1);
  const auto single = load_one(d1, one);
  RecordingRunner r1;
  run_experiments(single, Options{}, r1.scoring([](const auto&) { return 1.0; }));
  for (const auto& ov : r1.seen) EXPECT_FALSE(has(ov, "run.seed=1"));
  RecordingRunner r2;
  run_experiments(single, o, r2.scoring([](const auto&) { return 1.0; }));
  for (const auto& ov : r2.seen) EXPECT_EQ(ov.back(), "run.seed=7");
}

TEST(Reproduce, SeedsStartAtTheScenariosOwnSeedAsInASweep) {
  // The one seed rule (sweep's too): N seeds are run.seed S .. S+N-1 of the cell's scenario
  // under its overrides, a --set run.seed included; --first-seed replaces S.
  TempDir d;
  std::string text = with_seeds(3);
  const auto exps = load_one(d, text);
  Options o;
  o.scenario_seed = [](const std::string&, const std::vector<std::string>& ov) {
    std::uint64_t seed = 40;  // the file's own
    for (const std::string& x : ov)
      if (x.rfind("run.seed=", 0) == 0) seed = std::stoull(x.substr(9));
    return seed;
  };
  RecordingRunner rec;
  const auto results = run_experiments(exps, o, rec.scoring([](const auto&) { return 1.0; }));
  std::set<std::string> seeds;
  for (const auto& ov : rec.seen) seeds.insert(ov.back());
  EXPECT_EQ(seeds, (std::set<std::string>{"run.seed=40", "run.seed=41", "run.seed=42"}));
  EXPECT_EQ(results.at(0).cells.at(0).first_seed, 40);
  EXPECT_EQ(to_json(results, 1.0)["experiments"][0]["cells"][0]["first_seed"], 40);

  o.extra_overrides = {"run.seed=9"};  // reproduce --set run.seed=9: the start, not every run
  RecordingRunner set;
  run_experiments(exps, o, set.scoring([](const auto&) { return 1.0; }));
  seeds.clear();
  for (const auto& ov : set.seen) seeds.insert(ov.back());
  EXPECT_EQ(seeds, (std::set<std::string>{"run.seed=9", "run.seed=10", "run.seed=11"}));

  o.extra_overrides.clear();
  o.first_seed = 100;
  RecordingRunner first;
  run_experiments(exps, o, first.scoring([](const auto&) { return 1.0; }));
  seeds.clear();
  for (const auto& ov : first.seen) seeds.insert(ov.back());
  EXPECT_EQ(seeds, (std::set<std::string>{"run.seed=100", "run.seed=101", "run.seed=102"}));

  o.first_seed = 0;
  o.scenario_seed = [](const std::string&, const std::vector<std::string>&) {
    return std::uint64_t{1} << 40;
  };
  EXPECT_THROW(run_experiments(exps, o, rec.scoring([](const auto&) { return 1.0; })),
               std::invalid_argument);
}

TEST(Uncertainty, RatioStandardErrorAddsBothCellsRelativeSpread) {
  // a: 180, 220 (mean 200, sd 28.28) against an exact 100: se = 2 x (28.28 / 200) / sqrt(2).
  EXPECT_NEAR(ratio_standard_error({180, 220}, {100}), 0.2, 1e-12);
  // Same seeds, opposite moves: the covariance adds (a up where b is down).
  const double apart = ratio_standard_error({180, 220}, {110, 90});
  // Same seeds, moving together by the same factor: the ratio does not move at all.
  EXPECT_NEAR(ratio_standard_error({180, 220}, {90, 110}), 0.0, 1e-12);
  // Independent (different seed counts): the two spreads add without the covariance.
  const double independent = ratio_standard_error({180, 220}, {110, 90, 100});
  EXPECT_GT(apart, independent);
  EXPECT_GT(independent, 0.2);
  EXPECT_EQ(ratio_standard_error({5}, {7}), 0.0);  // single deterministic runs
  EXPECT_TRUE(std::isinf(ratio_standard_error({5, 6}, {0, 0})));
  EXPECT_TRUE(std::isinf(ratio_standard_error({NAN, 1}, {2, 2})));
}

TEST(Uncertainty, AVerdictIsResolvedOnlyWithRoomOnItsSideOfTheBand) {
  EXPECT_TRUE(verdict_resolved(1.5, 0.4, 1.0, 2.0));   // inside, 0.5 from either edge
  EXPECT_FALSE(verdict_resolved(1.5, 0.6, 1.0, 2.0));  // could fall out below or above
  EXPECT_TRUE(verdict_resolved(2.5, 0.4, 1.0, 2.0));   // outside, above
  EXPECT_TRUE(verdict_resolved(0.5, 0.4, 1.0, 2.0));   // outside, below
  EXPECT_FALSE(verdict_resolved(2.5, 0.6, 1.0, 2.0));  // could come back in
  EXPECT_TRUE(verdict_resolved(3.0, 0.0, 1.0, INFINITY));
  EXPECT_FALSE(verdict_resolved(3.0, INFINITY, 1.0, INFINITY));
  EXPECT_FALSE(verdict_resolved(NAN, 0.0, 1.0, 2.0));
}

TEST(Reproduce, AnEffectWhoseVerdictCouldFlipWithOtherSeedsIsMarkedNoise) {
  TempDir d;
  std::string text = with_seeds(3);
  const auto exps = load_one(d, text);
  // a: 100 in every seed; b: 100, 160, 220 (mean 160, sd 60). Ratio 1.6 inside [1.54, 2.6],
  // but its se 1.6 x (60 / 160) / sqrt(3) = 0.346 puts 1.6 - 2 se below the band (a does not
  // vary, so there is no covariance).
  const Runner runner = [](const std::string&, const std::vector<std::string>& ov) {
    const int seed = std::stoi(ov.back().substr(9));
    return run_with_score(has(ov, "guest.lock=tas") ? 40.0 + 60.0 * seed : 100.0);
  };
  const auto results = run_experiments(exps, Options{}, runner);
  const EffectResult& e = results.at(0).effects.at(0);
  EXPECT_DOUBLE_EQ(e.simulated, 1.6);
  EXPECT_TRUE(e.agrees);
  EXPECT_NEAR(e.se, 0.6 / std::sqrt(3.0), 1e-12);
  EXPECT_FALSE(e.resolved);
  const std::string table = to_table(results);
  EXPECT_NE(table.find("yes (noise)"), std::string::npos) << table;
  EXPECT_NE(table.find("1 of 1 effects agree with their bands (1 of the 1 verdicts are noise)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("0.693"), std::string::npos) << table;  // the 2 se column
  const auto j = to_json(results, 1.0);
  EXPECT_EQ(j["experiments"][0]["effects"][0]["resolved"], false);
  EXPECT_NEAR(j["experiments"][0]["effects"][0]["se"].get<double>(), 0.3464, 1e-4);
}

TEST(Experiment, SeedsMustBeASmallPositiveInteger) {
  for (const char* bad : {"seeds = 0\n", "seeds = 65\n", "seeds = \"x\"\n", "seeds = 1.5\n"}) {
    TempDir d;
    std::string text = kGood;
    text.replace(text.find("[quick]"), 0, bad);
    d.write("e/experiment.toml", text);
    d.write("e/s.toml", "");
    try {
      load_experiments(d.path.string());
      ADD_FAILURE() << bad;
    } catch (const ExperimentError& e) {
      EXPECT_NE(std::string(e.what()).find("seeds: must be an integer between 1 and 64"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Experiment, QuickSeedsMustBeASmallPositiveIntegerAndNamesItsKey) {
  std::string text = kGood;
  text.replace(text.find("set = [\"run.duration_ms=10\"]"), 0, "seeds = 0\n");
  expect_load_error(text, "experiment.toml:6:");
  expect_load_error(text, "quick.seeds: must be an integer between 1 and 64");
}

TEST(Reproduce, QuickRunsItsOwnSeedCountAndTheFullRunTheExperiments) {
  TempDir d;
  std::string text = with_seeds(4);
  text.replace(text.find("set = [\"run.duration_ms=10\"]"), 0, "seeds = 2\n");
  const auto exps = load_one(d, text);
  ASSERT_EQ(exps.at(0).seeds, 4);
  ASSERT_EQ(exps.at(0).quick_seeds, 2);
  for (const bool quick : {true, false}) {
    RecordingRunner rec;
    Options o;
    o.quick = quick;
    const auto results = run_experiments(exps, o, rec.scoring([](const auto&) { return 1.0; }));
    const std::size_t seeds = quick ? 2 : 4;
    EXPECT_EQ(rec.seen.size(), 2 * seeds);  // 2 cells
    EXPECT_EQ(results.at(0).cells.at(0).seeds, static_cast<int>(seeds));
    EXPECT_EQ(results.at(0).cells.at(0).per_seed.size(), seeds);
  }
  // Options::seeds (reproduce --seeds) wins over both.
  RecordingRunner rec;
  Options o;
  o.quick = true;
  o.seeds = 5;
  run_experiments(exps, o, rec.scoring([](const auto&) { return 1.0; }));
  EXPECT_EQ(rec.seen.size(), 10u);
  EXPECT_EQ(rec.seen.back().back(), "run.seed=5");
}

TEST(Metric, ProfileShareIsPercentOfTotal) {
  nlohmann::ordered_json run;
  run["profile"]["vm0"] = {{"total_ns", 1100},
                           {"symbols", {{"osq_lock", {{"ns", 180}}}, {"idle", {{"ns", 100}}}}}};
  run["profile"]["vm1"] = {{"total_ns", 1000}, {"symbols", {{"osq_lock", {{"ns", 180}}}}}};
  // 360 of the 2000 executed ns (idle takes no samples)
  EXPECT_DOUBLE_EQ(extract_metric(run, "profile:osq_lock"), 18.0);
  EXPECT_DOUBLE_EQ(extract_metric(run, "profile:absent"), 0.0);
  EXPECT_THROW(extract_metric(run, "nonsense"), std::runtime_error);
}

TEST(Metric, CounterShareIsPercentOfTheDenominatorEvent) {
  nlohmann::ordered_json run;
  run["counters"] = {{"pv_wait_early", 400}, {"pv_wait_early_preempted", 24}, {"pv_wait_head", 0}};
  EXPECT_DOUBLE_EQ(extract_metric(run, "counter_share:pv_wait_early_preempted/pv_wait_early"), 6.0);
  // Nothing counted in the denominator: undefined, shown as n/a rather than 0 %.
  EXPECT_TRUE(std::isnan(extract_metric(run, "counter_share:pv_wait_early/pv_wait_head")));
  EXPECT_EQ(metric_error("counter_share:pv_wait_early_preempted/pv_wait_early"), "");
  EXPECT_NE(metric_error("counter_share:bogus/pv_wait_early").find("unknown lock event 'bogus'"),
            std::string::npos);
  EXPECT_NE(metric_error("counter_share:pv_wait_early").find("<event>/<event>"), std::string::npos);
  EXPECT_NE(metric_error("profile:"), "");
  EXPECT_NE(metric_error("records"), "");
}

TEST(Metric, CounterRateIsPerVmAndSecondOfTheMeasuredWindow) {
  nlohmann::ordered_json run;
  run["measured_ns"] = 250'000'000;
  run["vms"] = nlohmann::ordered_json::array({{{"score", 1}}, {{"score", 2}}});
  run["counters"] = {{"pv_wait_node", 1000}, {"pv_wait_head", 0}};
  // 1000 events over 2 VMs and 0.25 s
  EXPECT_DOUBLE_EQ(extract_metric(run, "counter_rate:pv_wait_node"), 2000.0);
  EXPECT_DOUBLE_EQ(extract_metric(run, "counter_rate:pv_wait_head"), 0.0);
  EXPECT_EQ(metric_error("counter_rate:pv_wait_node"), "");
  EXPECT_NE(metric_error("counter_rate:bogus").find("unknown lock event 'bogus'"),
            std::string::npos);
  EXPECT_NE(metric_error("counter_rate:").find("unknown lock event ''"), std::string::npos);
  run["measured_ns"] = 0;
  EXPECT_THROW(extract_metric(run, "counter_rate:pv_wait_node"), std::runtime_error);
}

TEST(Experiment, BadMetricNamesTheCellAndKey) {
  std::string text = kGood;
  text.replace(text.find("published = 100"), 0, "metric = \"counter_share:nope/pv_wait_early\"\n");
  expect_load_error(text, "cell[0].metric: counter_share: unknown lock event 'nope'");
  text = kGood;
  text.replace(text.find("published = 100"), 0, "metric = \"counter_rate:pv_wait_nodes\"\n");
  expect_load_error(text, "cell[0].metric: counter_rate: unknown lock event 'pv_wait_nodes'");
}

TEST(Reproduce, CellsOfTheSameConfigurationShareOneRun) {
  TempDir d;
  std::string text = with_seeds(2);
  // A third cell: the same scenario and overrides as "b", another metric.
  text.replace(text.find("[[effect]]"), 0,
               "[[cell]]\nname = \"b share\"\nscenario = \"s.toml\"\nset = [\"guest.lock=tas\"]\n"
               "metric = \"counter_share:pv_wait_early_preempted/pv_wait_early\"\nunit = \"%\"\n");
  const auto exps = load_one(d, text);
  RecordingRunner rec;
  const Runner base =
      rec.scoring([](const auto& ov) { return has(ov, "guest.lock=tas") ? 2.0 : 1.0; });
  const Runner runner = [&](const std::string& path, const std::vector<std::string>& ov) {
    nlohmann::ordered_json run = base(path, ov);
    run["counters"] = {{"pv_wait_early", 50}, {"pv_wait_early_preempted", 5}};
    return run;
  };
  Options o;
  o.jobs = 2;
  int last_total = 0;
  o.progress = [&](int, int total) { last_total = total; };
  const auto results = run_experiments(exps, o, runner);
  EXPECT_EQ(rec.seen.size(), 4u);  // 2 configurations x 2 seeds, not 3 cells x 2 seeds
  EXPECT_EQ(last_total, 4);
  const auto& cells = results.at(0).cells;
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_DOUBLE_EQ(cells[1].simulated, 2.0);
  EXPECT_DOUBLE_EQ(cells[2].simulated, 10.0);
  EXPECT_EQ(cells[2].seeds, 2);
}

TEST(Explain, SummarisesProfileHostAndSlowPathPerSecond) {
  nlohmann::ordered_json run;
  run["measured_ns"] = 100000000;  // 0.1 s
  run["profile"]["vm0"] = {{"total_ns", 1e9},
                           {"symbols",
                            {{"spin", {{"ns", 3e8}}},
                             {"workload", {{"ns", 1e8}}},
                             {"pv_wait_halted", {{"ns", 5e8}}},
                             {"lock_ops", {{"ns", 5e7}}},
                             {"irq", {{"ns", 5e7}}}}}};
  run["host"] = {{"steal_pct", 49.4},
                 {"exits", {{"ple", 1200000}, {"hlt", 300}}},
                 {"ple_yields", {{"tried", 1300000}, {"done", 1100000}}},
                 {"kick_yields", {{"tried", 0}, {"done", 0}}},
                 {"lock_holder_preemptions", 15000}};
  run["counters"] = {{"pv_wait_node", 325},     {"pv_wait_head", 75},
                     {"pv_wait_early", 325},    {"pv_wait_early_preempted", 65},
                     {"pv_kick_wake", 100},     {"pv_latency_wake", 20000000},
                     {"pv_lock_stealing", 5000}};
  const std::string e = explain_run(run);
  for (const char* want :
       {"halted/idle 50% of vCPU time; executed: spin 60% workload 20% lock_ops 10%", "steal 49%",
        "PLE exits 12.0M/s", "HLT exits 3.0k/s", "directed yields 11.0M/s",
        "lock-holder preemptions 150.0k/s", "wait-early 3.2k/s (20% by vcpu_is_preempted)",
        "kick->run 200.0 us", "pv_wait halt 1250.0 us", "steals 50.0k/s"})
    EXPECT_NE(e.find(want), std::string::npos) << want << " in:\n" << e;
  EXPECT_EQ(e.find("kick yields"), std::string::npos) << e;  // nothing counted, not shown
  EXPECT_EQ(explain_run(nlohmann::ordered_json::object()), "");
}

TEST(Explain, GivesTheScorePerQuarterOfTheWindowFromTheSeries) {
  // 20 ms of warm-up, 40 ms window, 10 ms rows: quarters are the last four rows, averaged
  // over the two VMs.
  nlohmann::ordered_json run;
  run["simulated_ns"] = 60000000;
  run["measured_ns"] = 40000000;
  auto rows = [](std::vector<double> scores) {
    nlohmann::ordered_json r = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < scores.size(); ++i)
      r.push_back({10.0 * static_cast<double>(i + 1), scores[i], 0.0});
    return r;
  };
  run["series"]["vms"]["a"] = {{"score_unit", "records/s"},
                               {"rows", rows({0, 99, 1000, 2000, 3000, 4000})}};
  run["series"]["vms"]["b"] = {{"score_unit", "records/s"},
                               {"rows", rows({0, 99, 3000, 4000, 5000, 6000})}};
  run["host"] = {{"steal_pct", 10.0}};
  EXPECT_EQ(explain_run(run),
            "score by quarter of the window (mean VM): 2.0k / 3.0k / 4.0k / 5.0k records/s\n"
            "steal 10%");
  // Rows that straddle the quarters (15 ms rows over 10 ms quarters) are split by overlap.
  run["series"]["vms"] = nlohmann::ordered_json::object();
  run["series"]["vms"]["a"] = {
      {"score_unit", "ops/s"},
      {"rows", {{15.0, 0.0}, {30.0, 100.0}, {45.0, 200.0}, {60.0, 400.0}}}};
  EXPECT_EQ(explain_run(run),
            "score by quarter of the window (mean VM): 100 / 200 / 300 / 400 ops/s\nsteal 10%");
  // A workload whose score is not a rate has no quarters.
  run["series"]["vms"]["a"]["score_unit"] = "";
  EXPECT_EQ(explain_run(run), "steal 10%");
}

TEST(Explain, QuartersIntervalDividesTheWarmUpAndTheQuarters) {
  EXPECT_EQ(quarters_series_interval_ns(100, 150), 12'500'000);  // gcd(100, 37.5) ms
  EXPECT_EQ(quarters_series_interval_ns(20, 200), 10'000'000);
  EXPECT_EQ(quarters_series_interval_ns(0, 60), 15'000'000);
  EXPECT_EQ(quarters_series_interval_ns(0.001, 300), 0);  // 1 us rows: too many
  EXPECT_EQ(quarters_series_interval_ns(10, 0), 0);
}

TEST(Explain, SaysWhereWokenVcpusWentAndWhatEndedTheirWait) {
  nlohmann::ordered_json run;
  run["measured_ns"] = 100000000;  // 0.1 s
  run["host"] = {{"steal_pct", 10.0},
                 {"wakeups",
                  {{"onto_idle", 100},
                   {"preempting", 300},
                   {"queued", 600},
                   {"queued_wait_ns", 150000000},  // 500 waits of 300 us
                   {"queued_ran", 500},
                   {"queued_ended_by", {{"yield", 400}, {"block", 50}, {"tick", 25}}}}}};
  const std::string e = explain_run(run);
  EXPECT_NE(e.find("vCPU wake-ups 10.0k/s: 10% onto an idle pCPU, 30% preempting, 60% queued "
                   "(wait 300.0 us; ended by a yield 80%, block 10%, tick 5%)"),
            std::string::npos)
      << e;
  // No wake-ups: no part, and no empty separator either.
  run["host"]["wakeups"] = {{"onto_idle", 0}, {"preempting", 0}, {"queued", 0}};
  EXPECT_EQ(explain_run(run), "steal 10%");
}

TEST(Explain, SaysWhatTheShootdownsWaitedFor) {
  nlohmann::ordered_json run;
  run["measured_ns"] = 100000000;  // 0.1 s
  auto vm = [](int sent, int done, std::int64_t wait_ns, int pv, int pre) {
    return nlohmann::ordered_json{{"shootdowns",
                                   {{"sent", sent},
                                    {"done", done},
                                    {"wait_ns", wait_ns},
                                    {"targets",
                                     {{"halted_in_pv_wait", pv},
                                      {"halted_idle", 0},
                                      {"preempted", pre},
                                      {"irqs_off", 10},
                                      {"can_take", 90}}}}}};
  };
  // Two VMs: 300 shootdowns in 0.1 s, 250 of them done after 2 ms each on average.
  run["vms"] = {vm(100, 100, 200'000'000, 300, 100), vm(200, 150, 300'000'000, 200, 200)};
  EXPECT_EQ(explain_run(run),
            "shootdowns 1.5k/s per VM (wait 2.0 ms); targets when sent: halted in pv_wait 50%, "
            "preempted 30%, IRQs off 2%, halted idle 0%, able to take it 18%");
  // Targets whose call waited behind an IPI already pending there (cpumask_ipi): 250 of 1000.
  run["vms"][0]["shootdowns"]["queued_without_ipi"] = 100;
  run["vms"][1]["shootdowns"]["queued_without_ipi"] = 150;
  EXPECT_EQ(explain_run(run),
            "shootdowns 1.5k/s per VM (wait 2.0 ms); targets when sent: halted in pv_wait 50%, "
            "preempted 30%, IRQs off 2%, halted idle 0%, able to take it 18%; 25% queued "
            "behind a pending IPI");
  // A VM without shootdowns (another workload) shows nothing.
  run["vms"] = {nlohmann::ordered_json{{"score", 1.0}}};
  EXPECT_EQ(explain_run(run), "");
}

TEST(Explain, SaysHowKickTimeYieldsEnded) {
  nlohmann::ordered_json run;
  run["measured_ns"] = 100000000;  // 0.1 s
  run["host"] = {{"steal_pct", 10.0},
                 {"kick_yields",
                  {{"tried", 1000},
                   {"done", 400},
                   {"lost_to_ttwu_queue", 200},
                   {"both_single", 300},
                   {"refused", 100},
                   {"onto_kicker_pcpu", 100},
                   {"to_switching_in", 200},
                   {"kicker_descheduled", 300}}}};
  EXPECT_EQ(explain_run(run),
            "steal 10%, kick yields 4.0k/s of 10.0k/s tried (lost to TTWU_QUEUE 20%, both run "
            "queues single 30%, refused 10%; of those done, onto the kicker's pCPU 25%, to a "
            "vCPU the kick switched in 50%, kicker descheduled 75%)");
  // Newer results also count the yields after which the head still waited for its pCPU.
  run["host"]["kick_yields"]["target_left_waiting"] = 40;
  EXPECT_EQ(explain_run(run),
            "steal 10%, kick yields 4.0k/s of 10.0k/s tried (lost to TTWU_QUEUE 20%, both run "
            "queues single 30%, refused 10%; of those done, onto the kicker's pCPU 25%, to a "
            "vCPU the kick switched in 50%, kicker descheduled 75%, head left waiting 10%)");
  // Results from before the outcome counters: only the rates.
  run["host"]["kick_yields"] = {{"tried", 1000}, {"done", 400}};
  EXPECT_EQ(explain_run(run), "steal 10%, kick yields 4.0k/s of 10.0k/s tried");
}

TEST(Explain, SaysHowLongKickedVcpusTookToEnterByPath) {
  nlohmann::ordered_json run;
  run["measured_ns"] = 100000000;
  auto path = [](int n, std::int64_t ns, int over) {
    return nlohmann::ordered_json{{"n", n}, {"ns", ns}, {"over_1ms", over}};
  };
  run["host"] = {{"steal_pct", 10.0},
                 {"kick_to_entry",
                  {{"on_cpu", path(50, 250'000, 0)},
                   {"queued", path(25, 7'500'000, 5)},
                   {"queued_yielded", path(0, 0, 0)},
                   {"runnable", path(20, 40'000'000, 10)},
                   {"runnable_yielded", path(5, 10'000'000, 1)}}}};
  EXPECT_EQ(explain_run(run),
            "steal 10%, kick->entry: on its pCPU 50% 5.0 us (0% >= 1 ms), woken, queued 25% "
            "300.0 us (20% >= 1 ms), already runnable 20% 2000.0 us (50% >= 1 ms), already "
            "runnable, yielded to 5% 2000.0 us (20% >= 1 ms)");
  // No kicks: nothing shown.
  for (const char* p : {"on_cpu", "queued", "runnable", "runnable_yielded"})
    run["host"]["kick_to_entry"][p] = path(0, 0, 0);
  EXPECT_EQ(explain_run(run), "steal 10%");
}

TEST(Reproduce, ExplainKeepsTheFirstSeedsMechanismsPerCell) {
  TempDir d;
  std::string text = with_seeds(2);
  const auto exps = load_one(d, text);
  const Runner runner = [](const std::string&, const std::vector<std::string>& ov) {
    nlohmann::ordered_json run = run_with_score(100.0);
    run["measured_ns"] = 1000000000;
    run["host"] = {{"steal_pct", has(ov, "run.seed=1") ? 10.0 : 90.0}};
    return run;
  };
  Options o;
  o.explain = true;
  const auto results = run_experiments(exps, o, runner);
  EXPECT_EQ(results.at(0).cells.at(0).explain, "steal 10%");
  const std::string table = to_table(results);
  EXPECT_NE(table.find("why, a (seed 1):\n      steal 10%"), std::string::npos) << table;
  EXPECT_EQ(to_json(results, 1.0)["experiments"][0]["cells"][0]["explain"], "steal 10%");
  // Without --explain nothing is kept.
  EXPECT_EQ(run_experiments(exps, Options{}, runner).at(0).cells.at(0).explain, "");
}

TEST(Reproduce, ExplainGivesEverySeedsScoreByQuarter) {
  TempDir d;
  std::string text = with_seeds(2);
  const auto exps = load_one(d, text);
  // A 40 ms window after 20 ms of warm-up in 10 ms rows; seed 2 collapses in its third
  // quarter.
  const Runner runner = [](const std::string&, const std::vector<std::string>& ov) {
    nlohmann::ordered_json run = run_with_score(100.0);
    run["simulated_ns"] = 60000000;
    run["measured_ns"] = 40000000;
    const bool second = has(ov, "run.seed=2");
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    const double scores[] = {0, 0, 1000, 1000, second ? 10.0 : 1000, 1000};
    for (int i = 0; i < 6; ++i) rows.push_back({10.0 * (i + 1), scores[i]});
    run["series"]["vms"]["vm0"] = {{"score_unit", "ops/s"}, {"rows", rows}};
    return run;
  };
  Options o;
  o.explain = true;
  const auto results = run_experiments(exps, o, runner);
  const CellResult& a = results.at(0).cells.at(0);
  EXPECT_EQ(a.quarters_per_seed, (std::vector<std::string>{"1.0k / 1.0k / 1.0k / 1.0k ops/s",
                                                           "1.0k / 1.0k / 10 / 1.0k ops/s"}));
  const std::string table = to_table(results);
  EXPECT_NE(table.find("      seed 2 by quarter: 1.0k / 1.0k / 10 / 1.0k ops/s\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(to_json(results, 1.0)["experiments"][0]["cells"][0]["quarters_per_seed"].size(), 2u);
  // One seed, or no --explain: no per-seed lines.
  EXPECT_TRUE(run_experiments(exps, Options{}, runner).at(0).cells.at(0).quarters_per_seed.empty());
}

}  // namespace
}  // namespace pvlock::reproduce

namespace pvlock::reproduce {
namespace {

// kGood with cell b requiring a lock and, optionally, left out of --quick.
std::string with_requires(bool in_quick) {
  std::string text = kGood;
  text.replace(
      text.find("published_low = 190"), 0,
      std::string("requires = [\"kernel:v/pvqspinlock\"]\n") + (in_quick ? "" : "quick = false\n"));
  return text;
}

TEST(Reproduce, ACellWhoseLockIsNotBuiltIsNotRunAndSaysWhy) {
  TempDir d;
  const auto exps = load_one(d, with_requires(true));
  ASSERT_EQ(exps[0].cells[1].requires_locks, std::vector<std::string>{"kernel:v/pvqspinlock"});
  RecordingRunner rec;
  Options o;
  o.quick = true;
  o.lock_missing = [](const std::string& lock) {
    return lock == "kernel:v/pvqspinlock" ? std::string("not built: spatch not found") : "";
  };
  const auto results = run_experiments(exps, o, rec.scoring([](const auto&) { return 100.0; }));
  EXPECT_EQ(rec.seen.size(), 1u);  // only cell a ran
  ASSERT_EQ(results[0].cells.size(), 2u);
  EXPECT_EQ(results[0].cells[1].not_run, "kernel:v/pvqspinlock: not built: spatch not found");
  ASSERT_EQ(results[0].effects.size(), 1u);
  EXPECT_FALSE(results[0].effects[0].not_run.empty());
  EXPECT_EQ(tally(results).effects, 0);  // no verdict, not counted
  const std::string table = to_table(results);
  EXPECT_NE(table.find("not run: kernel:v/pvqspinlock: not built: spatch not found"),
            std::string::npos);
  EXPECT_NE(summary_line(results, true).find("1 effect not run"), std::string::npos);
  const auto j = to_json(results, 1.0);
  EXPECT_TRUE(j["experiments"][0]["effects"][0]["simulated"].is_null());
  EXPECT_EQ(j["experiments"][0]["cells"][1]["not_run"],
            "kernel:v/pvqspinlock: not built: spatch not found");

  // With the lock built, the cell runs.
  o.lock_missing = [](const std::string&) { return std::string(); };
  RecordingRunner all;
  const auto ran = run_experiments(exps, o, all.scoring([](const auto&) { return 100.0; }));
  EXPECT_EQ(all.seen.size(), 2u);
  EXPECT_TRUE(ran[0].cells[1].not_run.empty());
}

TEST(Reproduce, ACellLeftOutOfQuickRunsOnlyInTheFullRun) {
  TempDir d;
  const auto exps = load_one(d, with_requires(false));
  EXPECT_FALSE(exps[0].cells[1].in_quick);
  Options o;
  o.quick = true;
  RecordingRunner quick;
  const auto q = run_experiments(exps, o, quick.scoring([](const auto&) { return 100.0; }));
  EXPECT_EQ(quick.seen.size(), 1u);
  ASSERT_EQ(q[0].cells.size(), 1u);
  EXPECT_EQ(q[0].cells[0].name, "a");
  EXPECT_TRUE(q[0].effects.empty());  // its effect needs cell b
  o.quick = false;
  RecordingRunner full;
  const auto f = run_experiments(exps, o, full.scoring([](const auto&) { return 100.0; }));
  EXPECT_EQ(full.seen.size(), 2u);
  EXPECT_EQ(f[0].cells.size(), 2u);
  EXPECT_EQ(f[0].effects.size(), 1u);
}

TEST(Experiment, RequiresAndQuickAreCheckedWithTheirKey) {
  TempDir d;
  std::string text = kGood;
  text.replace(text.find("published_low = 190"), 0, "quick = 1\n");
  d.write("e/experiment.toml", text);
  d.write("e/s.toml", "");
  try {
    load_experiments(d.path.string());
    FAIL() << "quick = 1 accepted";
  } catch (const ExperimentError& e) {
    EXPECT_NE(std::string(e.what()).find("cell[1].quick: must be true or false"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pvlock::reproduce
