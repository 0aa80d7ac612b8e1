// SPDX-License-Identifier: GPL-2.0-only
// The guest scheduler's clock under steal-time accounting ([vm.guest] steal_time_accounting,
// CONFIG_PARAVIRT_TIME_ACCOUNTING with KVM steal time): rq clock_task leaves out the time a
// vCPU waited, runnable, for its pCPU. One pCPU runs two VMs' vCPUs in 3 ms host slices, so
// each vCPU has it about half the time, and a guest slice of 12 ms (two runnable tasks)
// takes about twice as long in wall time when only the vCPU's own time counts.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "scenario/parse.hpp"
#include "sim/guest/sim_env.hpp"
#include "sim/host/kvm_platform.hpp"
#include "sim/simulation.hpp"
#include "workload/guest_api.hpp"

namespace pvlock::sim {
namespace {

const char* kOnePcpu = R"(
[run]
duration_ms = 120
warmup_ms = 0
watchdog_ms = 0
[machine]
sockets = 1
cores_per_socket = 1
threads_per_core = 1
[host]
scheduler = "cfs"
housekeeping_interval_ns = 0
sched_latency_ns = 6000000
sched_min_granularity_ns = 750000
[[vm]]
name = "vm"
vcpus = 1
[vm.workload]
type = "lockloop"
)";

// User-mode work in short pieces, so that a reschedule is taken within 0.1 ms.
void hog(std::int64_t ns) {
  for (std::int64_t done = 0; done < ns; done += 100'000) workload::api::compute(100'000);
}

struct Outcome {
  std::int64_t second_started = -1;  // wall time the guest's second task first ran
  std::int64_t steal_then = -1;      // the guest vCPU's steal time by then
};

// Guest "a" has two CPU-bound tasks on its vCPU; guest "b"'s vCPU, a CPU-bound task, shares
// the one pCPU with it (`other_vm`), or is absent.
Outcome second_task_start(bool accounting, bool other_vm) {
  const std::string set =
      std::string("vm[0].guest.steal_time_accounting=") + (accounting ? "true" : "false");
  const scenario::Scenario sc =
      scenario::parse_scenario(kOnePcpu, "steal_accounting_test.toml", {set});
  Simulation sim(sc, std::make_unique<KvmPlatform>(sc));
  Guest& a = sim.add_guest("a", sc.vms[0].guest, 1);
  Outcome o;
  a.create_task("first", 0, [] { hog(80'000'000); });
  a.create_task("second", 0, [&] {
    o.second_started = SimEnv::now_ns();
    o.steal_then = sim.platform().steal_ns(a.vcpu(0), o.second_started);
    hog(1'000'000);
  });
  if (other_vm) {
    Guest& b = sim.add_guest("b", sc.vms[0].guest, 1);
    b.create_task("other", 0, [] { hog(110'000'000); });
  }
  sim.run();
  return o;
}

TEST(StealAccounting, AloneOnItsPcpuTheSliceIsTheSameEitherWay) {
  const Outcome off = second_task_start(false, false);
  const Outcome on = second_task_start(true, false);
  ASSERT_GE(off.second_started, 12'000'000);
  EXPECT_EQ(on.second_started, off.second_started);
  EXPECT_EQ(on.steal_then, 0);
}

TEST(StealAccounting, ASharedPcpuStretchesTheSliceByTheStealTime) {
  // Without accounting the slice ends 12-16 ms of wall time in (guest ticks every 4 ms),
  // when the vCPU has had its pCPU for only about half of that. With it, the slice ends when
  // the guest's clock (wall time less steal) has advanced 12-16 ms: some 24 ms of wall time.
  const Outcome off = second_task_start(false, true);
  const Outcome on = second_task_start(true, true);
  ASSERT_GE(off.second_started, 12'000'000);
  EXPECT_LT(off.second_started, 16'500'000);
  EXPECT_LT(off.second_started - off.steal_then, 10'000'000);
  const std::int64_t on_clock = on.second_started - on.steal_then;
  EXPECT_GE(on_clock, 12'000'000);
  EXPECT_LT(on_clock, 16'500'000);
  EXPECT_GE(on.second_started, 20'000'000);
}

TEST(StealAccounting, BadValueNamesTheKey) {
  try {
    scenario::parse_scenario(kOnePcpu, "steal_accounting_test.toml",
                             {"vm[0].guest.steal_time_accounting=7"});
    FAIL() << "accepted a number";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("steal_time_accounting"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pvlock::sim
