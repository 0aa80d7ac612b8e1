// SPDX-License-Identifier: GPL-2.0-only
// The mutex and rwsem wait_lock in the simulator is the guest kernel's own spinlock, chosen
// as kvm_spinlock_init() chooses at boot: in a PV_UNHALT guest the PV qspinlock, so that
// when a wait_lock holder's vCPU is preempted the mutex's waiters spinning on wait_lock halt
// in pv_wait and are kicked rather than spin; under a host without PV unhalt the native
// qspinlock with virt_spin_lock (test-and-set); on bare metal the native qspinlock. The
// wait_lock has its own lock_stat row, and its spinning and halting show in the profile
// under the spinlock's symbols.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::workload {
namespace {

// Two 4-vCPU VMs on 4 pCPUs, each with two tasks per vCPU hammering one mutex: its waiters
// sleep, so unlocks and slow-path locks take wait_lock. The adversarial host
// (preempt_at_access) also deschedules vCPUs between any two memory accesses, so wait_lock
// holders are preempted inside their few-instruction critical sections; spin_threshold is
// short so that a waiter behind one halts within the run.
constexpr const char* kOvercommittedMutex = R"(
[run]
duration_ms = 40
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
vcpus = 4
[faults]
preempt_at_access = 0.01
[vm.guest]
spin_threshold = 64
[vm.workload]
type = "lockloop"
lock = "mutex"
tasks_per_vcpu = 2
compute_ns = 3000
hold_ns = 3000
)";

std::uint64_t counter(const nlohmann::ordered_json& j, const char* name) {
  return j.at("counters").at(name).get<std::uint64_t>();
}

const nlohmann::ordered_json* lockstat_row(const nlohmann::ordered_json& j, const std::string& vm,
                                           const std::string& name) {
  for (const auto& r : j.at("lockstat").at(vm))
    if (r.at("name") == name) return &r;
  return nullptr;
}

double profile_ns(const nlohmann::ordered_json& j, const std::string& vm, const char* sym) {
  const auto& syms = j.at("profile").at(vm).at("symbols");
  return syms.contains(sym) ? syms.at(sym).at("ns").get<double>() : 0.0;
}

TEST(WaitLock, PvGuestMutexWaitersHaltInPvWaitBehindAPreemptedHolder) {
  const auto j = harness::run_to_json(scenario::parse_scenario(kOvercommittedMutex, "w.toml", {}));
  // The mutex is contended through its slow path and the host preempts the guests' vCPUs.
  ASSERT_GT(counter(j, "mutex_sleep"), 0u);
  ASSERT_GT(j.at("host").at("steal_pct").get<double>(), 1.0);
  ASSERT_GT(j.at("faults").at("preempted_at_access").get<std::uint64_t>(), 0u);
  // Its wait_lock is the guest's PV qspinlock: waiters halted in pv_wait and were kicked.
  EXPECT_GT(counter(j, "pv_wait_node") + counter(j, "pv_wait_head"), 0u);
  EXPECT_GT(counter(j, "pv_kick_unlock"), 0u);
  EXPECT_EQ(counter(j, "virt_spin_lock"), 0u);
  // lock_stat has the wait_lock as an instance of its own, after the mutex's row.
  const auto* row = lockstat_row(j, "vm0", "lockloop.lock.wait_lock");
  ASSERT_NE(row, nullptr);
  EXPECT_GT(row->at("acquisitions").get<std::uint64_t>(), 0u);
  EXPECT_GT(row->at("contentions").get<std::uint64_t>(), 0u);
  // The profile shows the wait_lock's halting under the PV spinlock's symbol.
  EXPECT_GT(profile_ns(j, "vm0", "pv_wait_halted"), 0.0);
  EXPECT_EQ(profile_ns(j, "vm0", "virt_spin_lock"), 0.0);

  // The same run with the test-and-set wait_lock the library used to give every mutex:
  // waiters behind a preempted holder only spin.
  const auto t = harness::run_to_json(
      scenario::parse_scenario(kOvercommittedMutex, "w.toml", {"vm[0].guest.wait_lock=tas"}));
  EXPECT_EQ(counter(t, "pv_wait_node") + counter(t, "pv_wait_head"), 0u);
  EXPECT_GT(counter(t, "virt_spin_lock"), 0u);
  EXPECT_GT(profile_ns(t, "vm0", "virt_spin_lock"), 0.0);
}

TEST(WaitLock, NoPvUnhaltHostGivesTheTestAndSetOfVirtSpinLock) {
  const auto j = harness::run_to_json(scenario::parse_scenario(
      std::string(kOvercommittedMutex) + "[host.kvm]\npv_unhalt = false\n", "w.toml", {}));
  ASSERT_GT(counter(j, "mutex_sleep"), 0u);
  EXPECT_EQ(counter(j, "pv_wait_node") + counter(j, "pv_wait_head"), 0u);
  EXPECT_GT(counter(j, "virt_spin_lock"), 0u);
}

TEST(WaitLock, RunsAreDeterministic) {
  const auto sc = scenario::parse_scenario(kOvercommittedMutex, "w.toml", {});
  auto a = harness::run_to_json(sc);
  auto b = harness::run_to_json(sc);
  a.erase("perf");
  b.erase("perf");
  EXPECT_EQ(a.dump(), b.dump());
}

// A bare-metal kernel's wait_lock is the native qspinlock: queued, never test-and-set.
TEST(WaitLock, BareMetalMutexWaitLockIsTheNativeQspinlock) {
  const auto j = harness::run_to_json(scenario::parse_scenario(R"(
[run]
duration_ms = 20
warmup_ms = 2
watchdog_ms = 0
[machine]
sockets = 1
cores_per_socket = 4
threads_per_core = 1
[workload]
type = "lockloop"
lock = "mutex"
tasks_per_vcpu = 2
compute_ns = 1000
hold_ns = 2000
)",
                                                               "b.toml", {}));
  ASSERT_GT(counter(j, "mutex_sleep"), 0u);
  EXPECT_EQ(counter(j, "virt_spin_lock"), 0u);
  EXPECT_EQ(counter(j, "pv_wait_node") + counter(j, "pv_wait_head"), 0u);
  const auto* row = lockstat_row(j, "machine", "lockloop.lock.wait_lock");
  ASSERT_NE(row, nullptr);
  EXPECT_GT(row->at("acquisitions").get<std::uint64_t>(), 0u);
}

// The runner's choice, rule by rule (kvm_spinlock_init).
TEST(WaitLock, ResolvedAsTheKernelChoosesAtBoot) {
  scenario::GuestSpec g;
  using K = RawSpinlockKind;
  // A guest built with a spinlock uses it for its raw spinlocks too.
  EXPECT_EQ(harness::resolve_wait_lock(g, "ticket", true).kind, K::ticket);
  EXPECT_EQ(harness::resolve_wait_lock(g, "pvqspinlock", true).kind, K::pvqspinlock);
  EXPECT_EQ(harness::resolve_wait_lock(g, "tas", false).kind, K::tas);
  // A guest whose lock is a sleeping one: the kernel's spinlock at boot.
  EXPECT_EQ(harness::resolve_wait_lock(g, "mutex", true).kind, K::pvqspinlock);
  EXPECT_EQ(harness::resolve_wait_lock(g, "rwsem", false).kind, K::qspinlock);
  g.nopvspin = true;
  EXPECT_EQ(harness::resolve_wait_lock(g, "mutex", true).kind, K::qspinlock);
  // The wait_lock knob overrides.
  g.policies.raw_spinlock = K::mcs;
  EXPECT_EQ(harness::resolve_wait_lock(g, "pvqspinlock", true).kind, K::mcs);
}

}  // namespace
}  // namespace pvlock::workload
