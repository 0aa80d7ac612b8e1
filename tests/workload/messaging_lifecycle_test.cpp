// SPDX-License-Identifier: GPL-2.0-only
// messaging's process lifecycle (lifecycle = true): the parent forks the groups, children
// exit through the root anon_vma rwsem and tasklist_lock, the parent reaps them and forks
// each finished group again. Short loops so that groups turn over many times in a few ms.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "scenario/parse.hpp"
#include "sim/sim_helpers.hpp"

namespace pvlock::sim {
namespace {

scenario::Scenario lifecycle(const std::string& lock = "pvqspinlock", std::uint64_t seed = 1) {
  scenario::Scenario sc = testing::bare_metal(1, 4, lock, "messaging", 20, 2, seed);
  testing::set_param(sc, "groups", std::int64_t{3});
  testing::set_param(sc, "senders", std::int64_t{4});
  testing::set_param(sc, "receivers", std::int64_t{4});
  testing::set_param(sc, "loops", std::int64_t{10});
  testing::set_param(sc, "lifecycle", true);
  return sc;
}

const nlohmann::ordered_json& stat_row(const nlohmann::ordered_json& j, const std::string& name) {
  for (const auto& r : j.at("lockstat").at("machine"))
    if (r.at("name") == name) return r;
  throw std::runtime_error("no lock_stat row " + name);
}

TEST(MessagingLifecycle, ForksExitsAndReapsWithExclusion) {
  const auto j = harness::run_to_json(lifecycle());
  EXPECT_FALSE(j.contains("liveness")) << j["liveness"].dump(2);
  const auto& vm = j.at("vms").at(0);
  EXPECT_GT(vm.at("score").get<double>(), 0);
  // Several group turnovers (24 children each) inside the 18 ms window.
  EXPECT_GT(vm.at("forks").get<std::uint64_t>(), 48u);
  EXPECT_GT(vm.at("exits").get<std::uint64_t>(), 48u);
  EXPECT_GT(vm.at("reaps").get<std::uint64_t>(), 48u);
  EXPECT_EQ(vm.at("lifecycle_violations").get<std::uint64_t>(), 0u);
  // Every fork and exit takes the root anon_vma; fork, exit and reap take tasklist_lock,
  // and so does each scan of wait().
  const auto& anon = stat_row(j, "messaging.anon_vma_root");
  const auto& tasklist = stat_row(j, "messaging.tasklist_lock");
  EXPECT_GE(anon.at("acquisitions").get<std::uint64_t>(),
            vm.at("forks").get<std::uint64_t>() + vm.at("exits").get<std::uint64_t>() - 2);
  EXPECT_GT(tasklist.at("acquisitions").get<std::uint64_t>(),
            anon.at("acquisitions").get<std::uint64_t>());
  EXPECT_GT(anon.at("contentions").get<std::uint64_t>(), 0u);
}

// Whole runs back to back: every group forked, released together, all reaped, again.
TEST(MessagingLifecycle, WholeRunsBackToBack) {
  scenario::Scenario sc = lifecycle();
  testing::set_param(sc, "lifecycle_runs", true);
  const auto j = harness::run_to_json(sc);
  EXPECT_FALSE(j.contains("liveness")) << j["liveness"].dump(2);
  const auto& vm = j.at("vms").at(0);
  EXPECT_GT(vm.at("score").get<double>(), 0);
  EXPECT_GT(vm.at("forks").get<std::uint64_t>(), 72u);  // more than one run of 3 x 24
  EXPECT_GT(vm.at("reaps").get<std::uint64_t>(), 72u);
  EXPECT_EQ(vm.at("lifecycle_violations").get<std::uint64_t>(), 0u);
  EXPECT_GT(stat_row(j, "messaging.anon_vma_root").at("acquisitions").get<std::uint64_t>(), 72u);
}

// The self-check sees a lock that does not exclude: the guest's "spinlock" is busted.
// Long holds make the exits of a group overlap in it.
TEST(MessagingLifecycle, SelfCheckCatchesBustedTasklistLock) {
  scenario::Scenario sc = lifecycle("busted");
  testing::set_param(sc, "tasklist_hold_ns", testing::constant(20'000));
  const auto j = harness::run_to_json(sc);
  EXPECT_GT(j.at("vms").at(0).at("lifecycle_violations").get<std::uint64_t>(), 0u);
}

TEST(MessagingLifecycle, SameSeedSameRun) {
  const auto a = harness::run_to_json(lifecycle("pvqspinlock", 7));
  const auto b = harness::run_to_json(lifecycle("pvqspinlock", 7));
  EXPECT_EQ(a.at("vms").at(0).at("score").get<double>(),
            b.at("vms").at(0).at("score").get<double>());
  EXPECT_EQ(a.at("vms").dump(), b.at("vms").dump());
  EXPECT_EQ(a.at("lockstat").dump(), b.at("lockstat").dump());
  EXPECT_EQ(a.at("profile").dump(), b.at("profile").dump());
}

// The guest's CONFIG_PREEMPT_NONE (seed003): with several tasks per vCPU the tick no longer
// switches tasks inside read/write/fork/exit/wait, which changes the run; the run is still
// live, exclusive and reproducible.
TEST(MessagingLifecycle, PreemptNoneIsLiveReproducibleAndDifferent) {
  scenario::Scenario none = lifecycle("pvqspinlock", 3);
  none.vms.front().guest.preempt = scenario::GuestSpec::Preempt::none;
  const auto a = harness::run_to_json(none);
  const auto b = harness::run_to_json(none);
  const auto full = harness::run_to_json(lifecycle("pvqspinlock", 3));
  EXPECT_FALSE(a.contains("liveness")) << a["liveness"].dump(2);
  EXPECT_EQ(a.at("vms").at(0).at("lifecycle_violations").get<std::uint64_t>(), 0u);
  EXPECT_GT(a.at("vms").at(0).at("reaps").get<std::uint64_t>(), 48u);
  EXPECT_EQ(a.at("vms").dump(), b.at("vms").dump());
  EXPECT_EQ(a.at("profile").dump(), b.at("profile").dump());
  EXPECT_NE(a.at("vms").dump(), full.at("vms").dump());
}

// lifecycle = false is the steady-state model: no new locks, no new result fields, and the
// same run as without the key.
TEST(MessagingLifecycle, OffIsTheSteadyStateModel) {
  scenario::Scenario off = lifecycle();
  testing::set_param(off, "lifecycle", false);
  scenario::Scenario unset = lifecycle();
  unset.vms.front().workload.params.erase("lifecycle");
  const auto a = harness::run_to_json(off);
  const auto b = harness::run_to_json(unset);
  // 3 groups x 4 pipes, each mutex with its wait_lock's row
  EXPECT_EQ(a.at("lockstat").at("machine").size(), 24u);
  EXPECT_FALSE(a.at("vms").at(0).contains("forks"));
  EXPECT_EQ(a.at("vms").dump(), b.at("vms").dump());
  EXPECT_EQ(a.at("profile").dump(), b.at("profile").dump());
}

std::string error_of(const std::string& extra) {
  const std::string text =
      "[run]\nduration_ms = 2\nwarmup_ms = 1\n[machine]\nsockets = 1\ncores_per_socket = 2\n"
      "[workload]\ntype = \"messaging\"\ngroups = 1\nsenders = 2\nreceivers = 2\n" +
      extra;
  return testing::scenario_error(text, "m.toml");
}

TEST(MessagingLifecycle, BadKeysNameFileLineAndField) {
  EXPECT_EQ(error_of("lifecycle = 1\n"),
            "m.toml:12:13: workload.lifecycle: expected true or false, got an integer");
  EXPECT_EQ(error_of("lifecycle = true\nexit_anon_vma_hold_ns = -2\n"),
            "m.toml:13:25: workload.exit_anon_vma_hold_ns: must be a finite number >= 0, got -2");
  EXPECT_EQ(error_of("fork_ns = \"slow\"\n"),
            "m.toml:12:11: workload.fork_ns: expected a number (ns) or a {dist = ...} table, got "
            "a string");
  EXPECT_EQ(error_of("reap_scan_ns = 2e6\n"),
            "m.toml:12:16: workload.reap_scan_ns: must be between 0 and 1000000, got 2000000");
  EXPECT_EQ(error_of("tasklist_hold = 5\n"),
            "m.toml:12:17: workload.tasklist_hold: unknown key 'tasklist_hold' in [workload] of "
            "type messaging; known: type, groups, senders, receivers, loops, send_compute_ns, "
            "send_hold_ns, recv_compute_ns, recv_hold_ns, pipe_capacity, lock, lifecycle, "
            "lifecycle_runs, fork_ns, fork_anon_vma_hold_ns, exit_ns, exit_anon_vma_hold_ns, "
            "tasklist_hold_ns, "
            "reap_scan_ns, file_vmas, mapped_files, i_mmap_hold_ns");
  EXPECT_EQ(error_of("file_vmas = 4\n"),
            "m.toml:12:13: workload.file_vmas: file_vmas needs lifecycle = true (fork and exit "
            "take the i_mmap_rwsem)");
  EXPECT_EQ(error_of("lifecycle = true\nfile_vmas = 4\nmapped_files = 5\n"),
            "m.toml:14:16: workload.mapped_files: mapped_files (5) cannot exceed file_vmas (4)");
}

// file_vmas: every fork and every exit takes each file-backed VMA's i_mmap_rwsem for write,
// one VMA at a time, the VMAs mapping `mapped_files` files in consecutive runs (6 VMAs over
// 3 files: two acquisitions of each file's rwsem per fork or exit).
TEST(MessagingLifecycle, FileVmasTakeTheirFilesIMmapRwsemAtForkAndExit) {
  scenario::Scenario sc = lifecycle();
  testing::set_param(sc, "file_vmas", std::int64_t{6});
  testing::set_param(sc, "mapped_files", std::int64_t{3});
  const auto j = harness::run_to_json(sc);
  EXPECT_FALSE(j.contains("liveness")) << j["liveness"].dump(2);
  const auto& vm = j.at("vms").at(0);
  EXPECT_EQ(vm.at("lifecycle_violations").get<std::uint64_t>(), 0u);
  const std::uint64_t forks = vm.at("forks").get<std::uint64_t>();
  const std::uint64_t exits = vm.at("exits").get<std::uint64_t>();
  ASSERT_GT(forks + exits, 48u);
  const auto anon = stat_row(j, "messaging.anon_vma_root").at("acquisitions").get<std::uint64_t>();
  for (int f = 0; f < 3; ++f) {
    const auto& row = stat_row(j, "messaging.i_mmap_rwsem[" + std::to_string(f) + "]");
    // Twice per fork or exit, as the root anon_vma is taken once. Both are counted over the
    // measured window, so each of the (at most 4, one per vCPU) forks or exits under way at
    // either end of it may be counted in part: 2 acquisitions each.
    const auto n = row.at("acquisitions").get<std::uint64_t>();
    EXPECT_GE(n + 8, 2 * anon) << f;
    EXPECT_LE(n, 2 * anon + 8) << f;
  }
  EXPECT_THROW((void)stat_row(j, "messaging.i_mmap_rwsem[3]"), std::runtime_error);
  // Without file_vmas there are no i_mmap_rwsem rows, and the run is the one of before.
  const auto off = harness::run_to_json(lifecycle());
  EXPECT_THROW((void)stat_row(off, "messaging.i_mmap_rwsem[0]"), std::runtime_error);
  EXPECT_NE(off.at("vms").dump(), j.at("vms").dump());
}

}  // namespace
}  // namespace pvlock::sim
