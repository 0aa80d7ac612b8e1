// SPDX-License-Identifier: GPL-2.0-only
// The historic pvqspinlock in the simulator, on the over-committed example host (two VMs of
// 16 vCPUs on 16 pCPUs), chosen by the guest profile alone: a 4.2 guest has no lock
// stealing and no early wait, and kicks a halted successor at the MCS hand-off; 4.5 adds one
// steal attempt and pv_wait_early; 4.8 hybrid stealing. The same scenario and seed, only
// `kernel` differs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::harness {
namespace {

const std::string kExample = std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml";

nlohmann::ordered_json run(const std::string& kernel, std::vector<std::string> overrides = {}) {
  overrides.push_back("vm[0].guest.kernel=\"" + kernel + "\"");
  return run_to_json(scenario::load_scenario_file(kExample, overrides));
}

std::uint64_t counter(const nlohmann::ordered_json& j, const char* name) {
  return j.at("counters").at(name).get<std::uint64_t>();
}

void expect_live(const nlohmann::ordered_json& j) {
  ASSERT_FALSE(j.contains("liveness")) << j["liveness"]["text"].get<std::string>();
  for (const auto& vm : j.at("vms")) EXPECT_GT(vm.at("ops").get<std::uint64_t>(), 0u);
}

TEST(PvQspinlockEraSim, Linux42NeitherStealsNorWaitsEarly) {
  for (int seed = 1; seed <= 2; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::string s = "run.seed=" + std::to_string(seed);
    const auto old = run("4.2", {s});
    expect_live(old);
    EXPECT_EQ(counter(old, "pv_lock_stealing"), 0u);
    EXPECT_EQ(counter(old, "pv_wait_early"), 0u);

    const auto now = run("4.8", {s});
    expect_live(now);
    EXPECT_GT(counter(now, "pv_lock_stealing"), 0u);
    EXPECT_GT(counter(now, "pv_wait_early"), 0u);
  }
}

TEST(PvQspinlockEraSim, Linux45StealsOnceAndWaitsEarly) {
  const auto j = run("4.5");
  expect_live(j);
  EXPECT_GT(counter(j, "pv_lock_stealing"), 0u);
  EXPECT_GT(counter(j, "pv_wait_early"), 0u);
}

// Before 75d2270280686 the hand-off kicks a halted successor, and then the unlock kicks it
// again if it halted as the head: more kicked wake-ups than unlock kicks. From 4.3 on only
// the unlock kicks.
TEST(PvQspinlockEraSim, Linux42KicksAtHandOff) {
  const std::vector<std::string> low{"vm[0].guest.spin_threshold=256"};
  const auto old = run("4.2", low);
  expect_live(old);
  // At the kernel's threshold no 4.2 waiter halts here (PLE exits hand the pCPU away
  // first); at 256 they do, and are kicked: the lock is PV, only its history differs.
  EXPECT_GT(counter(old, "pv_wait_node"), 0u);
  EXPECT_GT(counter(old, "pv_kick_wake"), counter(old, "pv_kick_unlock"));
  const auto later = run("4.3", low);
  expect_live(later);
  EXPECT_LE(counter(later, "pv_kick_wake"), counter(later, "pv_kick_unlock"));
}

TEST(PvQspinlockEraSim, SameSeedSameBytes) {
  auto a = run("4.2");
  auto b = run("4.2");
  a.erase("perf");  // wall-clock figures of the simulating process
  b.erase("perf");
  EXPECT_EQ(a.dump(), b.dump());
}

}  // namespace
}  // namespace pvlock::harness
