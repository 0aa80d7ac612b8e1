// SPDX-License-Identifier: GPL-2.0-only
// The liveness watchdog and fault injection (sim/watchdog/, sim/faults/): a lost kick to a
// waiter halted with IRQs off is reported, never a silent hang; with IRQs on it is a late
// wake-up; faulty runs are as deterministic as any other; no [faults] = nothing changes.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "sim_helpers.hpp"

namespace pvlock::sim {
namespace {

std::string without_perf(nlohmann::ordered_json j) {
  j.erase("perf");
  return j.dump();
}

// Six CPUs of bare metal taking a pvqspinlock that halts waiters after a short spin.
scenario::Scenario pv_lockloop(bool irqs_off, double drop_kick, std::uint64_t seed = 1) {
  scenario::Scenario sc = testing::bare_metal(1, 6, "pvqspinlock", "lockloop", 40, 0, seed);
  sc.vms.front().guest.policies.qspinlock.spin_threshold = 16;
  sc.vms.front().guest.policies.qspinlock.hybrid_stealing = false;
  testing::set_param(sc, "hold_ns", testing::constant(1000));
  testing::set_param(sc, "compute_ns", testing::constant(200));
  testing::set_param(sc, "irqs_off", irqs_off);
  sc.faults.drop_kick = drop_kick;
  return sc;
}

TEST(Watchdog, LostKickWithIrqsOffIsReported) {
  const auto j = harness::run_to_json(pv_lockloop(true, 0.2));
  ASSERT_TRUE(j.contains("liveness")) << j.dump(2);
  const auto& l = j["liveness"];
  EXPECT_EQ(l["limit_ns"].get<std::int64_t>(), 20'000'000);  // half of the 40 ms run
  ASSERT_FALSE(l["tasks"].empty());
  const auto& t = l["tasks"][0];
  EXPECT_NE(t["task"].get<std::string>().find("lockloop/"), std::string::npos);
  EXPECT_NE(t["lock"].get<std::string>().find("pvqspinlock"), std::string::npos);
  EXPECT_NE(t["state"].get<std::string>().find("halted in pv_wait with IRQs off"),
            std::string::npos);
  EXPECT_NE(t["lock_word"].get<std::string>().find("locked="), std::string::npos);
  EXPECT_NE(l["text"].get<std::string>().find("FAULT kick lost"), std::string::npos);
  EXPECT_GT(j["faults"]["dropped_kicks"].get<std::uint64_t>(), 0u);
}

TEST(Watchdog, LostKickWithIrqsOnIsALateWakeup) {
  const auto j = harness::run_to_json(pv_lockloop(false, 0.2));
  EXPECT_FALSE(j.contains("liveness")) << j["liveness"].dump(2);
  EXPECT_GT(j["faults"]["late_wakeups"].get<std::uint64_t>(), 0u);
  // The guest tick (4 ms) ends each such halt; the kick may be lost just before the waiter
  // halts, and the halt then ends at the first tick after it began: under two ticks.
  EXPECT_LE(j["faults"]["max_late_wakeup_ns"].get<std::int64_t>(), 8'000'000);
}

TEST(Watchdog, CanBeTurnedOff) {
  scenario::Scenario sc = pv_lockloop(true, 0.2);
  sc.run.watchdog_ms = 0;
  EXPECT_FALSE(harness::run_to_json(sc).contains("liveness"));
}

TEST(Faults, SameSeedSameBytes) {
  scenario::Scenario sc = pv_lockloop(false, 0.05, 3);
  sc.faults.spurious_wakeup = 0.1;
  sc.faults.kick_delay_ns = 3000;
  sc.faults.ipi_delay_ns = 2000;
  const auto a = without_perf(harness::run_to_json(sc));
  EXPECT_EQ(a, without_perf(harness::run_to_json(sc)));
  sc.run.seed = 4;
  EXPECT_NE(a, without_perf(harness::run_to_json(sc)));
}

TEST(Faults, SpuriousWakeupsAreToleratedAndCounted) {
  scenario::Scenario sc = pv_lockloop(false, 0);
  sc.faults.spurious_wakeup = 0.2;
  const auto j = harness::run_to_json(sc);
  EXPECT_FALSE(j.contains("liveness"));
  EXPECT_GT(j["faults"]["spurious_wakeups"].get<std::uint64_t>(), 0u);
  EXPECT_GT(j["counters"]["pv_spurious_wakeup"].get<std::uint64_t>(), 0u);
}

// The adversarial schedule (preempt_at_access) on a 2x over-committed host: the host thread
// takes the pCPU between two memory accesses, the vCPU counts as preempted, the unmutated
// lock copes, and the same seed gives the same bytes.
TEST(Faults, PreemptAtAccessIsDeterministicAndTolerated) {
  scenario::Scenario sc = pv_lockloop(true, 0);
  sc.host = scenario::HostSpec{};
  sc.machine.cores_per_socket = 3;
  sc.vms.front().placement = scenario::VmSpec::Placement::floating;
  sc.faults.preempt_at_access = 0.002;
  sc.faults.preempt_at_access_ns = 30'000;
  const auto j = harness::run_to_json(sc);
  EXPECT_FALSE(j.contains("liveness")) << j["liveness"].dump(2);
  EXPECT_GT(j["faults"]["preempted_at_access"].get<std::uint64_t>(), 0u);
  EXPECT_GT(j["host"]["preemptions"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(without_perf(j), without_perf(harness::run_to_json(sc)));
  sc.faults.preempt_at_access = 0;
  EXPECT_FALSE(harness::run_to_json(sc).contains("faults"));  // off: nothing drawn, nothing shown
}

TEST(Faults, AbsentFaultsLeaveNoTrace) {
  const auto j = harness::run_to_json(pv_lockloop(false, 0));
  EXPECT_FALSE(j.contains("faults"));
  EXPECT_FALSE(j.contains("liveness"));
}

}  // namespace
}  // namespace pvlock::sim
