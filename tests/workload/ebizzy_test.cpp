// ebizzy's madvise(MADV_DONTNEED) in the kernel's order: tlb_finish_mmu() shoots down the
// other CPUs' TLB entries before release_pages() (lru lock) and the buddy free
// (zone->lock) give the pages back. Every IPI is delayed 3 ms here, so a 2 ms run ends
// with each task still waiting for its first shootdown: it must not have taken either
// lock yet.
#include <gtest/gtest.h>

#include <string>

#include "scenario/parse.hpp"
#include "sim/run.hpp"

namespace pvlock::workload {
namespace {

constexpr const char* kMadviseOnly = R"(
[run]
duration_ms = 2
warmup_ms = 0
watchdog_ms = 0
[machine]
sockets = 1
cores_per_socket = 2
[faults]
ipi_delay_ns = 3000000
[workload]
type = "ebizzy"
tasks_per_vcpu = 1
user_ns = 10000
faults = 0
madvise_ns = 1000
madvise_lru_locks = 1
madvise_zone_locks = 1
)";

std::uint64_t acquisitions(const nlohmann::ordered_json& j, const std::string& lock) {
  for (const auto& r : j.at("lockstat").at("machine"))
    if (r.at("name") == lock) return r.at("acquisitions").get<std::uint64_t>();
  ADD_FAILURE() << "no lock_stat row " << lock;
  return 0;
}

TEST(Ebizzy, MadviseFlushesBeforeItFreesThePages) {
  const auto j = sim::run_to_json(scenario::parse_scenario(kMadviseOnly, "e.toml", {}));
  EXPECT_EQ(acquisitions(j, "ebizzy.lru"), 0u);
  EXPECT_EQ(acquisitions(j, "ebizzy.zone"), 0u);
  // Without the shootdown the same window frees pages many times over.
  const auto k = sim::run_to_json(
      scenario::parse_scenario(kMadviseOnly, "e.toml", {"workload.shootdown=false"}));
  EXPECT_GT(acquisitions(k, "ebizzy.lru"), 10u);
  EXPECT_GT(acquisitions(k, "ebizzy.zone"), 10u);
}

}  // namespace
}  // namespace pvlock::workload
