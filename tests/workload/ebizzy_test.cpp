// SPDX-License-Identifier: GPL-2.0-only
// ebizzy's madvise(MADV_DONTNEED) in the kernel's order: tlb_finish_mmu() shoots down the
// other CPUs' TLB entries before release_pages() (lru lock) and the buddy free
// (zone->lock) give the pages back. Every IPI is delayed 3 ms here, so a 2 ms run ends
// with each task still waiting for its first shootdown: it must not have taken either
// lock yet.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

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
  const auto j = harness::run_to_json(scenario::parse_scenario(kMadviseOnly, "e.toml", {}));
  EXPECT_EQ(acquisitions(j, "ebizzy.lru"), 0u);
  EXPECT_EQ(acquisitions(j, "ebizzy.zone"), 0u);
  // Without the shootdown the same window frees pages many times over.
  const auto k = harness::run_to_json(
      scenario::parse_scenario(kMadviseOnly, "e.toml", {"workload.shootdown=false"}));
  EXPECT_GT(acquisitions(k, "ebizzy.lru"), 10u);
  EXPECT_GT(acquisitions(k, "ebizzy.zone"), 10u);
}

// The shootdown census (reproduce --explain): every target of every shootdown sent in the
// window is counted once, by what it was doing when its IPI went out.
constexpr const char* kOvercommitted = R"(
[run]
duration_ms = 20
warmup_ms = 5
watchdog_ms = 0
[machine]
sockets = 1
cores_per_socket = 4
threads_per_core = 1
[host]
scheduler = "cfs"
[[vm]]
count = 2
vcpus = 6
[vm.guest]
lock = "pvqspinlock"
spin_threshold = 16
[vm.workload]
type = "ebizzy"
user_ns = 20000
faults = 16
zone_hold_ns = 20000
)";

std::uint64_t at(const nlohmann::ordered_json& j, const char* key) {
  return j.at(key).get<std::uint64_t>();
}

TEST(Ebizzy, ShootdownCensusCountsEveryTargetOfEveryShootdownOnce) {
  const auto j = harness::run_to_json(scenario::parse_scenario(kOvercommitted, "o.toml", {}));
  std::uint64_t preempted = 0, halted = 0;
  for (const auto& vm : j.at("vms")) {
    const auto& sd = vm.at("shootdowns");
    const auto& t = sd.at("targets");
    std::uint64_t targets = 0;
    for (const auto& [state, n] : t.items()) targets += n.get<std::uint64_t>();
    EXPECT_GT(at(sd, "sent"), 0u);
    EXPECT_EQ(targets, at(sd, "sent") * 5);  // every other vCPU of the VM
    EXPECT_LE(at(sd, "done"), at(sd, "sent"));
    EXPECT_GT(at(sd, "wait_ns"), 0u);
    preempted += at(t, "preempted");
    halted += at(t, "halted_in_pv_wait");
  }
  // Over-committed, with long zone->lock holds: some targets are off their pCPU, some are
  // lock waiters halted in pv_wait.
  EXPECT_GT(preempted, 0u);
  EXPECT_GT(halted, 0u);

  // Bare metal: no host to preempt a CPU, and the native lock never halts.
  const auto b = harness::run_to_json(scenario::parse_scenario(
      kMadviseOnly, "e.toml", {"faults.ipi_delay_ns=0", "run.duration_ms=5"}));
  const auto& sd = b.at("vms").at(0).at("shootdowns");
  EXPECT_GT(at(sd, "done"), 0u);
  EXPECT_EQ(at(sd.at("targets"), "preempted"), 0u);
  EXPECT_EQ(at(sd.at("targets"), "halted_in_pv_wait"), 0u);
}

TEST(Ebizzy, AFunctionCallQueuedBehindAnUnrunOneSendsNoIpi) {
  // smp_call_function_many() sends an IPI only to targets whose call_single_queue was
  // empty: a preempted target collects the calls of several shootdowns behind one IPI.
  // The window is the whole run, so the census counts every target of every shootdown.
  const auto j =
      harness::run_to_json(scenario::parse_scenario(kOvercommitted, "o.toml", {"run.warmup_ms=0"}));
  std::uint64_t ipis = 0, targets = 0, queued = 0;
  for (const auto& vm : j.at("vms")) {
    ipis += at(vm, "shootdown_ipis");
    queued += at(vm.at("shootdowns"), "queued_without_ipi");
    for (const auto& [state, n] : vm.at("shootdowns").at("targets").items())
      targets += n.get<std::uint64_t>();
  }
  EXPECT_GT(ipis, 0u);
  EXPECT_LT(ipis, targets);
  // The census says which: every target either got an IPI or was queued behind one.
  EXPECT_EQ(ipis + queued, targets);
  // Every IPI was an exit on the sender (no PV send-IPI here).
  EXPECT_EQ(j.at("host").at("exits").at("ipi").get<std::uint64_t>(), ipis);
}

TEST(Ebizzy, ShootdownWaitIsProfiledAsSmpCallFunctionMany) {
  // Every IPI 200 us late against ~12 us of work per record: the run is nearly all
  // shootdown wait, which perf in a guest shows under smp_call_function_many()
  // (csd_lock_wait() is inlined there), not as a generic spin.
  const auto j = harness::run_to_json(scenario::parse_scenario(
      kMadviseOnly, "e.toml", {"faults.ipi_delay_ns=200000", "run.duration_ms=5"}));
  const auto& syms = j.at("profile").at("machine").at("symbols");
  ASSERT_TRUE(syms.contains("smp_call_function_many"));
  EXPECT_GT(syms.at("smp_call_function_many").at("pct").get<double>(), 50.0);
  EXPECT_FALSE(syms.contains("spin"));
}

}  // namespace
}  // namespace pvlock::workload
