// SPDX-License-Identifier: GPL-2.0-only
// The rwsem's era in the simulator: a 5.3-5.10 guest profile turns on the readers'
// optimistic spinning (rwsem_reader_spin), whose readers take a writer-released lock while
// spinning and never steal; a 5.11+ guest's readers steal and never spin. The same torture
// run, reader-heavy, under both profiles.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::sim {
namespace {

const char* kTorture = R"(
[run]
duration_ms = 4
warmup_ms = 1
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
)";

nlohmann::ordered_json run(const std::string& kernel) {
  return harness::run_to_json(scenario::parse_scenario(kTorture, "rwsem_reader_spin_test.toml",
                                                       {"guest.kernel=\"" + kernel + "\""}));
}

double counter(const nlohmann::ordered_json& j, const char* name) {
  const auto& c = j.at("counters");
  return c.contains(name) ? c.at(name).get<double>() : 0.0;
}

TEST(RwsemReaderSpin, AFiveThreeGuestsReadersSpinAndNeverSteal) {
  const auto j = run("5.3");
  EXPECT_GT(counter(j, "rwsem_opt_rlock"), 0.0);
  EXPECT_EQ(counter(j, "rwsem_rlock_steal"), 0.0);
  EXPECT_GT(counter(j, "rwsem_wlock") + counter(j, "rwsem_opt_lock"), 0.0);
}

TEST(RwsemReaderSpin, AFiveElevenGuestsReadersStealAndNeverSpin) {
  const auto j = run("5.11");
  EXPECT_EQ(counter(j, "rwsem_opt_rlock"), 0.0);
  EXPECT_EQ(counter(j, "rwsem_opt_rlock2"), 0.0);
  EXPECT_EQ(counter(j, "rwsem_opt_norspin"), 0.0);
  EXPECT_GT(counter(j, "rwsem_rlock_steal") + counter(j, "rwsem_rlock"), 0.0);
}

TEST(RwsemReaderSpin, TheProfileSetsTheSwitchAndAKeyOverridesIt) {
  const auto on = scenario::parse_scenario(kTorture, "t.toml", {"guest.kernel=\"5.10\""});
  EXPECT_TRUE(on.vms.front().guest.policies.rwsem.reader_spin);
  const auto off = scenario::parse_scenario(kTorture, "t.toml", {"guest.kernel=\"5.2\""});
  EXPECT_FALSE(off.vms.front().guest.policies.rwsem.reader_spin);
  const auto kept = scenario::parse_scenario(
      kTorture, "t.toml", {"guest.kernel=\"5.4\"", "guest.rwsem_reader_spin=false"});
  EXPECT_FALSE(kept.vms.front().guest.policies.rwsem.reader_spin);
}

}  // namespace
}  // namespace pvlock::sim
