// SPDX-License-Identifier: GPL-2.0-only
// `pvlock bench` smoke test: every registered lock and every peer runs a tiny point, and the
// JSON document has the documented shape. Throughput is never asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "native/bench.hpp"
#include "native/bench_report.hpp"
#include "native/peers/peers.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"

namespace pvlock::native {
namespace {

bool listed(const std::string& name) {
  const auto locks = bench_locks();
  return std::any_of(locks.begin(), locks.end(),
                     [&](const BenchLock& l) { return l.name == name; });
}

BenchOptions tiny() {
  BenchOptions o;
  o.duration_s = 0.02;
  o.cs_lines = 2;
  o.outside_ns = 50;
  return o;
}

TEST(BenchLocks, ListsEveryRegistryLockButNegativeControls) {
  for (const LockInfo& info : lock_infos<NativeEnv>())
    EXPECT_EQ(listed(std::string(info.name)), !info.negative_control) << info.name;
}

TEST(BenchLocks, ListsThePeers) {
  for (const char* name : {"std_mutex", "pthread_spin", "pthread_adaptive"})
    EXPECT_TRUE(listed(name)) << name;
#if PVLOCK_HAVE_CK
  for (const char* name : {"ck_fas", "ck_ticket", "ck_mcs"}) EXPECT_TRUE(listed(name)) << name;
#endif
  EXPECT_FALSE(listed("busted"));
}

TEST(BenchLocks, DefaultThreadCountsScaleWithCores) {
  const auto t = default_thread_counts();
  ASSERT_FALSE(t.empty());
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_GE(t.front(), 1);
}

TEST(BenchRun, EveryLockRunsAndReportsJson) {
  BenchOptions o = tiny();
  // Every row must show operations, so a point must outlast a thread's wait for a CPU on a
  // loaded machine (this one is itself a guest with steal time, and ctest runs two tests at
  // once): at 20 ms a whole point could pass with its threads descheduled.
  o.duration_s = 0.2;
  o.threads = {1, 2};
  const std::vector<BenchRow> rows = run_bench(o);
  const std::size_t locks = bench_locks().size();
  ASSERT_EQ(rows.size(), 2 * locks);

  const nlohmann::ordered_json j = bench_json(o, rows);
  EXPECT_EQ(j["benchmark"], "pvlock bench");
  ASSERT_TRUE(j["rows"].is_array());
  ASSERT_EQ(j["rows"].size(), rows.size());
  for (const auto& row : j["rows"]) {
    SCOPED_TRACE(row.dump());
    EXPECT_TRUE(row["lock"].is_string());
    EXPECT_TRUE(row["threads"].is_number_integer());
    EXPECT_TRUE(row["ops_per_s"].is_number());
    EXPECT_TRUE(row["fairness"].is_number());
    EXPECT_GT(row["ops"].get<std::uint64_t>(), 0u);
    EXPECT_GT(row["ops_per_s"].get<double>(), 0.0);
    EXPECT_GE(row["fairness"].get<double>(), 0.0);
    EXPECT_LE(row["fairness"].get<double>(), 1.0);
    EXPECT_LE(row["per_thread"]["min"].get<std::uint64_t>(),
              row["per_thread"]["max"].get<std::uint64_t>());
    EXPECT_FALSE(row["stuck"].get<bool>());
  }
}

TEST(BenchRun, OneThreadIsPerfectlyFair) {
  const BenchRow r = run_bench_point("tas", 1, tiny());
  EXPECT_EQ(r.threads, 1);
  EXPECT_EQ(r.min_per_thread, r.max_per_thread);
  EXPECT_DOUBLE_EQ(r.fairness, 1.0);
  EXPECT_EQ(r.ops, r.max_per_thread);
}

TEST(BenchRun, CriticalSectionOptionsAreAccepted) {
  BenchOptions o = tiny();
  o.cs_lines = 0;
  o.cs_ns = 100;
  EXPECT_GT(run_bench_point("std_mutex", 2, o).ops, 0u);
}

TEST(BenchRun, RejectsBadInput) {
  EXPECT_THROW(run_bench_point("nope", 1, tiny()), std::invalid_argument);
  EXPECT_THROW(run_bench_point("busted", 1, tiny()), std::invalid_argument);
  EXPECT_THROW(run_bench_point("tas", 0, tiny()), std::invalid_argument);
  BenchOptions o = tiny();
  o.cs_lines = -1;
  EXPECT_THROW(run_bench_point("tas", 1, o), std::invalid_argument);
}

TEST(BenchReport, CsvAndTableHaveOneLinePerRow) {
  BenchRow r;
  r.lock = "tas";
  r.origin = "pvlock";
  r.threads = 2;
  r.ops = 10;
  const std::string csv = bench_csv_row(r);
  const std::string header = bench_csv_header();
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), ','), std::count(header.begin(), header.end(), ','));
  EXPECT_NE(bench_table_row(r).find("tas"), std::string::npos);
}

}  // namespace
}  // namespace pvlock::native
