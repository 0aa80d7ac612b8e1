// SPDX-License-Identifier: GPL-2.0-only
// PV sched yield (KVM_FEATURE_PV_SCHED_YIELD, v5.3 guests): after sending call-function
// IPIs, kvm_smp_send_call_func_ipi() asks the host to yield to the first target it sees
// preempted (KVM_HC_SCHED_YIELD), and the host's kvm_sched_yield() -- the helper the
// kick-time yield of seed 001 shares -- yields to it. Here ebizzy's TLB shootdowns are the
// callers, in two over-committed VMs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/host/scenario_run.hpp"

namespace pvlock::sim {
namespace {

// 2 VMs x 8 vCPUs on 8 pCPUs (2x over-commit), ebizzy with short records: many shootdowns.
const char* kShootdowns = R"(
[run]
duration_ms = 30
warmup_ms = 5
seed = 3
watchdog_ms = 0
[machine]
sockets = 1
cores_per_socket = 8
threads_per_core = 1
[host]
scheduler = "cfs"
[host.kvm]
irq_boost = true
[[vm]]
name = "vm"
count = 2
vcpus = 8
[vm.guest]
lock = "pvqspinlock"
[vm.workload]
type = "ebizzy"
user_ns = 20000
faults = 16
)";

nlohmann::ordered_json run(const std::vector<std::string>& overrides) {
  return test::run_toml(kShootdowns, "pv_sched_yield_test.toml", overrides);
}

std::uint64_t n(const nlohmann::ordered_json& j, const char* a, const char* b) {
  return j.at("host").at(a).at(b).get<std::uint64_t>();
}

TEST(PvSchedYield, ShootdownsYieldToAPreemptedTargetOnlyWhenTheGuestUsesIt) {
  const auto off = run({});
  EXPECT_EQ(n(off, "exits", "sched_yield"), 0u);
  EXPECT_EQ(n(off, "sched_yields", "tried"), 0u);

  const auto on = run({"vm[0].guest.pv_sched_yield=true"});
  // Over-committed: shootdowns find preempted targets, and most yields go through (the
  // target is queued, the initiator's pCPU has company).
  const std::uint64_t exits = n(on, "exits", "sched_yield");
  EXPECT_GT(exits, 0u);
  EXPECT_GT(n(on, "sched_yields", "done"), 0u);
  EXPECT_LE(n(on, "sched_yields", "done"), n(on, "sched_yields", "tried"));
  EXPECT_LE(n(on, "sched_yields", "tried"), exits);
  // At most one hypercall per shootdown sent in the window, and each one followed a
  // vcpu_is_preempted() call the guest without the feature does not make.
  std::uint64_t shootdowns = 0;
  for (const auto& vm : on.at("vms"))
    shootdowns += vm.at("shootdowns").at("sent").get<std::uint64_t>();
  EXPECT_LE(exits, shootdowns);
  EXPECT_GT(test::counter(on, "vcpu_is_preempted_calls"),
            test::counter(off, "vcpu_is_preempted_calls"));
  // Per VM counters add up to the host's.
  std::uint64_t per_vm = 0;
  for (const auto& vm : on.at("vms"))
    per_vm += vm.at("host").at("exits").at("sched_yield").get<std::uint64_t>();
  EXPECT_EQ(per_vm, exits);
}

TEST(PvSchedYield, NotUsedUnderTheRealtimeHint) {
  // kvm_guest_init() leaves smp_ops alone when the host says the vCPUs are dedicated.
  const auto j = run({"vm[0].guest.pv_sched_yield=true", "vm[0].guest.realtime_hint=true"});
  EXPECT_EQ(n(j, "exits", "sched_yield"), 0u);
}

TEST(PvSchedYield, TheKickBoostPatchMakesTheHostRefuseTargetsThatAreNotReady) {
  // 266e85a5ec9 put its "ready" test into kvm_sched_yield(), which KVM_HC_SCHED_YIELD uses
  // too. Without the interrupt-delivery boost a woken vCPU is not ready until it has run,
  // yet a host writing the preempted byte on every put shows it preempted from its halt:
  // the guest asks, and only the patched host refuses.
  const std::vector<std::string> common = {
      "vm[0].guest.pv_sched_yield=true", "host.kvm.irq_boost=false",
      "host.kvm.preempted_on_every_put=true", "host.kvm.yield_bailout_undercommit=false",
      // Long zone->lock holds and a short spin: lock waiters halt, and get kicked.
      "vm[0].guest.spin_threshold=16", "vm[0].workload.zone_hold_ns=20000"};
  auto with = [&](const char* kick_boost) {
    auto o = common;
    o.push_back(std::string("host.kvm.kick_boost=") + kick_boost);
    return run(o);
  };
  const auto unpatched = with("false");
  EXPECT_EQ(n(unpatched, "sched_yields", "tried"), n(unpatched, "exits", "sched_yield"));
  EXPECT_GT(n(unpatched, "exits", "hlt"), 0u);
  const auto patched = with("true");
  EXPECT_LT(n(patched, "sched_yields", "tried"), n(patched, "exits", "sched_yield"));
  EXPECT_GT(n(patched, "sched_yields", "done"), 0u);
}

TEST(PvSchedYield, Deterministic) {
  const auto a = run({"vm[0].guest.pv_sched_yield=true"});
  const auto b = run({"vm[0].guest.pv_sched_yield=true"});
  EXPECT_EQ(a.at("vms").dump(), b.at("vms").dump());
  EXPECT_EQ(a.at("host").dump(), b.at("host").dump());
}

}  // namespace
}  // namespace pvlock::sim
