// SPDX-License-Identifier: GPL-2.0-only
// The paravirt ticket lock in the simulator, on the over-committed example host (two VMs of
// 16 vCPUs on 16 pCPUs): with SPIN_THRESHOLD lowered to 256, waiters whose turn is far off
// halt, and each is kicked by the unlock of the ticket before its own; at the kernel's 1 << 15
// the waits are short enough here that few if any waiters ever get to halt.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::harness {
namespace {

const std::string kExample = std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml";

nlohmann::ordered_json run(std::vector<std::string> overrides) {
  overrides.push_back("vm[0].guest.lock=pvticket");
  return run_to_json(scenario::load_scenario_file(kExample, overrides));
}

std::uint64_t counter(const nlohmann::ordered_json& j, const char* name) {
  return j.at("counters").at(name).get<std::uint64_t>();
}

TEST(PvTicketSim, OvercommittedWaitersHaltAndAreKicked) {
  for (int seed = 1; seed <= 3; ++seed) {
    const auto j = run({"vm[0].guest.spin_threshold=256", "run.seed=" + std::to_string(seed)});
    ASSERT_FALSE(j.contains("liveness")) << j["liveness"]["text"].get<std::string>();
    for (const auto& vm : j.at("vms")) EXPECT_GT(vm.at("ops").get<std::uint64_t>(), 0u);
    const std::uint64_t slow = counter(j, "taken_slow");
    const std::uint64_t pickup = counter(j, "taken_slow_pickup");
    const std::uint64_t searched = counter(j, "released_slow");
    const std::uint64_t kicked = counter(j, "released_slow_kicked");
    EXPECT_GT(slow, 0u) << "seed " << seed;
    EXPECT_GT(kicked, 0u) << "seed " << seed;
    // Each kick follows a search; a waiter is kicked at most once per slow-path entry.
    EXPECT_LE(kicked, searched);
    EXPECT_LE(kicked + pickup, slow);
    // The kicks are KVM_HC_KICK_CPU hypercalls the host delivers.
    EXPECT_GT(j.at("host").at("kicks").get<std::uint64_t>(), 0u);
  }
}

TEST(PvTicketSim, DefaultThresholdIsSlowNotStuck) {
  const auto j = run({});
  ASSERT_FALSE(j.contains("liveness")) << j["liveness"]["text"].get<std::string>();
  for (const auto& vm : j.at("vms")) EXPECT_GT(vm.at("ops").get<std::uint64_t>(), 0u);
  // Every slow-path entry either halted or picked its turn up; every kick had a search.
  EXPECT_LE(counter(j, "released_slow_kicked"), counter(j, "released_slow"));
  EXPECT_LE(counter(j, "taken_slow_pickup"), counter(j, "taken_slow"));
}

TEST(PvTicketSim, SameSeedSameBytes) {
  auto a = run({"vm[0].guest.spin_threshold=256"});
  auto b = run({"vm[0].guest.spin_threshold=256"});
  a.erase("perf");  // wall-clock figures of the simulating process
  b.erase("perf");
  EXPECT_EQ(a.dump(), b.dump());
}

}  // namespace
}  // namespace pvlock::harness
