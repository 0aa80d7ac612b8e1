// SPDX-License-Identifier: GPL-2.0-only
// Halt -> kick -> running latency, measured by the PV lock's own counters (pv_latency_kick:
// the unlocker's hypercall; pv_latency_wake: kick to the waiter running again), equals the
// configured costs; adaptive halt polling grows to catch short halts and shrinks after long
// ones (kvm_vcpu_block's grow_halt_poll_ns / shrink_halt_poll_ns), a halt lasting until the
// woken thread runs again.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/host/scenario_run.hpp"

namespace pvlock::sim {
namespace {

// Two vCPUs on four pCPUs (no over-commit, no host housekeeping): a woken vCPU never waits
// for a pCPU, so the latency is pure cost. SPIN_THRESHOLD = 1 makes every waiter halt.
const char* kTwoVcpus = R"(
[run]
duration_ms = 20
warmup_ms = 2
seed = 3
[machine]
sockets = 1
cores_per_socket = 4
threads_per_core = 1
[costs]
host_wake_idle_ns = 6000
host_wake_polling_ns = 800
hlt_exit_ns = 700
hypercall_ns = 620
kick_send_ns = 300
[host]
scheduler = "cfs"
housekeeping_interval_ns = 0
[host.kvm]
halt_poll_ns = 0
ple = false
[[vm]]
name = "vm"
vcpus = 2
[vm.guest]
lock = "pvqspinlock"
spin_threshold = 1
[vm.workload]
type = "lockloop"
compute_ns = 1000
hold_ns = 50000
)";

nlohmann::ordered_json run(const std::vector<std::string>& overrides) {
  return test::run_toml(kTwoVcpus, "latency_test.toml", overrides);
}

double per_event(const nlohmann::ordered_json& j, const char* sum, const char* n) {
  return test::counter(j, sum) / test::counter(j, n);
}

// The waiter's own cache misses on the way out of pv_wait (kick timestamp, lock word):
// a few line transfers on top of the configured costs.
constexpr double kMissesNs = 150;

TEST(HaltKickLatency, BlockedHaltCostsTheIdleWakeUp) {
  const auto j = run({});
  ASSERT_GT(j.at("counters").at("pv_kick_wake").get<double>(), 10.0);
  const double wake = per_event(j, "pv_latency_wake", "pv_kick_wake");
  EXPECT_GE(wake, 6000.0 + 700.0);
  EXPECT_LE(wake, 6000.0 + 700.0 + kMissesNs);
  const double kick = per_event(j, "pv_latency_kick", "pv_kick_unlock");
  EXPECT_GE(kick, 620.0 + 300.0);
  EXPECT_LE(kick, 620.0 + 300.0 + kMissesNs);
  EXPECT_EQ(j.at("host").at("halt_polls_ok").get<int>(), 0);
}

TEST(HaltKickLatency, PollingHaltCostsThePollingWakeUp) {
  // Halts last about one 50 us hold: polling (max 200 us) grows 10 -> 20 -> 40 -> 80 us and
  // then catches every kick.
  const auto j = run({"host.kvm.halt_poll_ns=200000"});
  const auto& h = j.at("host");
  EXPECT_GT(h.at("halt_polls_ok").get<double>(), 10.0 * h.at("halt_blocks").get<double>());
  const double wake = per_event(j, "pv_latency_wake", "pv_kick_wake");
  EXPECT_GE(wake, 800.0 + 700.0);
  EXPECT_LE(wake, 800.0 + 700.0 + 0.1 * (6000 - 800));
  // The difference between the two modes is exactly the difference of the two wake costs.
  const double blocked = per_event(run({}), "pv_latency_wake", "pv_kick_wake");
  EXPECT_NEAR(blocked - wake, 6000.0 - 800.0, 0.1 * (6000 - 800));
}

TEST(HaltKickLatency, PollingNeverCatchesHaltsLongerThanItsMaximum) {
  // Max 40 us < the 50 us halts: the window grows to 40 us, every poll fails, and a long
  // halt shrinks it (shrink = 0 resets it), so no kick is ever caught polling.
  const auto j = run({"host.kvm.halt_poll_ns=40000"});
  // No kick is caught polling: every kick pays the blocked wake-up. (The guest's 4 ms timer
  // tick may land in a poll and end it, a valid wake-up for KVM, hence "at most one".)
  EXPECT_LE(j.at("host").at("halt_polls_ok").get<int>(), 1);
  EXPECT_GE(per_event(j, "pv_latency_wake", "pv_kick_wake"), 6000.0 + 700.0);
  EXPECT_GT(j.at("host").at("halt_blocks").get<int>(), 10);
}

TEST(HaltKickLatency, PollingCountsTheWakeUpInTheHaltsLength) {
  // kvm_vcpu_block() takes block_ns when the woken thread runs again: a 50 us halt whose
  // wake-up from an idle pCPU takes 200 us more has lasted 250 us, longer than the 200 us
  // maximum, so the window shrinks (reset) instead of growing and never catches a kick. With
  // a 6 us wake-up the same halts grow it (PollingHaltCostsThePollingWakeUp).
  const auto slow = run({"host.kvm.halt_poll_ns=200000", "costs.host_wake_idle_ns=200000"});
  EXPECT_LE(slow.at("host").at("halt_polls_ok").get<int>(), 1);  // (a tick may land in one)
  EXPECT_GT(slow.at("host").at("halt_blocks").get<int>(), 10);
  const auto fast = run({"host.kvm.halt_poll_ns=200000"});
  EXPECT_GT(fast.at("host").at("halt_polls_ok").get<int>(), 10);
}

}  // namespace
}  // namespace pvlock::sim
