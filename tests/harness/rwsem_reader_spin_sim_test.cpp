// SPDX-License-Identifier: GPL-2.0-only
// The rwsem's era in the simulator: a 5.3-5.10 guest profile turns on the readers'
// optimistic spinning (rwsem_reader_spin), whose readers, finding a writer in the way, spin
// on the OSQ and take the lock unqueued, and never steal; a 5.11+ guest's readers (or a 5.3
// guest with the switch off) steal or sleep and never spin. The same torture run under each.
//
// The run must send readers to the slow path. The torture workload puts one writer on every
// vCPU and the readers beside them, so a reader only runs once the guest tick (4 ms) has
// preempted its vCPU's writer: the run lasts several ticks, and one writer hold in 50 is a
// long one (200 us), so that readers arrive while a writer runs with the lock held.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::sim {
namespace {

const char* kTorture = R"(
[run]
duration_ms = 40
warmup_ms = 2
seed = 2
[machine]
sockets = 1
cores_per_socket = 8
threads_per_core = 1
[guest]
lock = "rwsem"
[workload]
type = "torture"
readers = 6
hold_ns = 2000
long_hold_ns = 200000
long_hold_one_in = 50
)";

nlohmann::ordered_json run(const std::string& kernel, std::vector<std::string> sets = {}) {
  sets.insert(sets.begin(), "guest.kernel=\"" + kernel + "\"");
  return harness::run_to_json(
      scenario::parse_scenario(kTorture, "rwsem_reader_spin_test.toml", sets));
}

double counter(const nlohmann::ordered_json& j, const char* name) {
  const auto& c = j.at("counters");
  return c.contains(name) ? c.at(name).get<double>() : 0.0;
}

// Exclusion held, nobody stuck, and readers got the lock through the slow path (a reader
// that took the fast path counts no event): by a spin, a steal or a grant.
void expect_sound_with_slow_readers(const nlohmann::ordered_json& j) {
  const auto& vm = j.at("vms").at(0);
  EXPECT_EQ(vm.at("violations").get<double>(), 0.0);
  EXPECT_FALSE(vm.at("stuck").get<bool>());
  EXPECT_GT(vm.at("read_acquisitions").get<double>(), 0.0);
  EXPECT_GT(counter(j, "rwsem_opt_rlock") + counter(j, "rwsem_opt_rlock2") +
                counter(j, "rwsem_rlock_steal") + counter(j, "rwsem_rlock"),
            0.0);
  EXPECT_GT(counter(j, "rwsem_opt_lock") + counter(j, "rwsem_wlock"), 0.0);
}

TEST(RwsemReaderSpin, AFiveThreeGuestsReadersSpinAndNeverSteal) {
  const auto j = run("5.3");
  expect_sound_with_slow_readers(j);
  // Most slow-path readers spin behind the writer and take the lock unqueued.
  EXPECT_GT(counter(j, "rwsem_opt_rlock"), counter(j, "rwsem_rlock"));
  EXPECT_EQ(counter(j, "rwsem_rlock_steal"), 0.0);
}

TEST(RwsemReaderSpin, AFiveElevenGuestsReadersStealAndNeverSpin) {
  const auto j = run("5.11");
  expect_sound_with_slow_readers(j);
  EXPECT_GT(counter(j, "rwsem_rlock_steal"), 0.0);
  EXPECT_EQ(counter(j, "rwsem_opt_rlock"), 0.0);
  EXPECT_EQ(counter(j, "rwsem_opt_rlock2"), 0.0);
  EXPECT_EQ(counter(j, "rwsem_opt_norspin"), 0.0);
}

TEST(RwsemReaderSpin, TheSwitchNotTheReleaseMakesReadersSpin) {
  // A 5.3 profile with the switch written off is the v5.11+ reader slow path.
  const auto j = run("5.3", {"guest.rwsem_reader_spin=false"});
  expect_sound_with_slow_readers(j);
  EXPECT_EQ(counter(j, "rwsem_opt_rlock"), 0.0);
  EXPECT_GT(counter(j, "rwsem_rlock_steal"), 0.0);
}

TEST(RwsemReaderSpin, TheProfileSetsTheSwitchAndAKeyOverridesIt) {
  const auto on = scenario::parse_scenario(kTorture, "t.toml", {"guest.kernel=\"5.10\""});
  EXPECT_TRUE(on.vms.front().guest.policies.rwsem.reader_spin);
  const auto off = scenario::parse_scenario(kTorture, "t.toml", {"guest.kernel=\"5.2\""});
  EXPECT_FALSE(off.vms.front().guest.policies.rwsem.reader_spin);
  const auto eleven = scenario::parse_scenario(kTorture, "t.toml", {"guest.kernel=\"5.11\""});
  EXPECT_FALSE(eleven.vms.front().guest.policies.rwsem.reader_spin);
  const auto kept = scenario::parse_scenario(
      kTorture, "t.toml", {"guest.kernel=\"5.4\"", "guest.rwsem_reader_spin=false"});
  EXPECT_FALSE(kept.vms.front().guest.policies.rwsem.reader_spin);
}

}  // namespace
}  // namespace pvlock::sim
