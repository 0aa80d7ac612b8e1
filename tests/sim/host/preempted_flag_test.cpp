// SPDX-License-Identifier: GPL-2.0-only
// The steal-time "preempted" byte in both host modes, seen through the guest's PV TLB flush
// (kvm_flush_tlb_multi skips targets whose byte is set): a vCPU descheduled while runnable
// reads preempted in both modes; a vCPU that merely halted reads preempted only on hosts
// before 54aa83c90198 (`preempted_on_every_put`), which wrote the byte on every vcpu_put.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/host/scenario_run.hpp"

namespace pvlock::sim {
namespace {

// ebizzy: its madvise shootdowns go to every other vCPU; with one task per vCPU, vCPUs whose
// task waits on the zone lock with a short SPIN_THRESHOLD halt (pv_wait) now and then.
const char* kEbizzy = R"(
[run]
duration_ms = 20
warmup_ms = 2
seed = 5
[machine]
sockets = 1
cores_per_socket = 8
threads_per_core = 1
[host]
scheduler = "cfs"
housekeeping_interval_ns = 0
[[vm]]
name = "vm"
vcpus = 4
[vm.guest]
lock = "pvqspinlock"
spin_threshold = 16
pv_tlb_flush = true
[vm.workload]
type = "ebizzy"
tasks_per_vcpu = 1
zone_hold_ns = 20000
)";

nlohmann::ordered_json run(const std::vector<std::string>& overrides) {
  return test::run_toml(kEbizzy, "preempted_flag_test.toml", overrides);
}

double skipped(const nlohmann::ordered_json& j) {
  double s = 0;
  for (const auto& vm : j.at("vms")) s += vm.at("shootdown_skipped_preempted").get<double>();
  return s;
}

TEST(PreemptedFlag, HaltedVcpusReadPreemptedOnlyOnOldHosts) {
  // No over-commit and no host housekeeping: nothing is ever descheduled while runnable.
  const auto now = run({});
  ASSERT_GT(now.at("host").at("exits").at("hlt").get<double>(), 0.0);
  EXPECT_EQ(now.at("host").at("preemptions").get<double>(), 0.0);
  EXPECT_EQ(skipped(now), 0.0);
  const auto old = run({"host.kvm.preempted_on_every_put=true"});
  EXPECT_GT(old.at("host").at("exits").at("hlt").get<double>(), 0.0);
  EXPECT_GT(skipped(old), 0.0);
}

TEST(PreemptedFlag, DescheduledRunnableVcpusReadPreemptedInBothModes) {
  // Two such VMs on two pCPUs: vCPUs lose their pCPU while runnable.
  for (const char* every_put : {"false", "true"}) {
    const auto j = run({"machine.cores_per_socket=2", "vm[0].count=2",
                        std::string("host.kvm.preempted_on_every_put=") + every_put});
    EXPECT_GT(j.at("host").at("preemptions").get<double>(), 0.0) << every_put;
    EXPECT_GT(skipped(j), 0.0) << every_put;
  }
}

}  // namespace
}  // namespace pvlock::sim
