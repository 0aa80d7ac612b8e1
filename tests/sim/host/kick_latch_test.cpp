// SPDX-License-Identifier: GPL-2.0-only
// The kick latch: KVM_HC_KICK_CPU sets the target's pv_unhalted, and the next HLT of any kind
// -- pv_wait's or the guest idle loop's -- finds the vCPU runnable and returns at once. It
// still exits and re-enters (hlt_exit_ns), but neither polls nor blocks. On bare metal the
// same latch is consumed at no cost.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "scenario/parse.hpp"
#include "sim/guest/sim_env.hpp"
#include "sim/host/kvm_platform.hpp"
#include "sim/simulation.hpp"
#include "workload/guest_api.hpp"

namespace pvlock::sim {
namespace {

// Two vCPUs on four pCPUs, nothing else on the host: a vCPU never waits for a pCPU. A long
// HLT exit (20 us) makes the exit's share of the timeline easy to see.
const char* kTwoVcpus = R"(
[run]
duration_ms = 2
warmup_ms = 0
watchdog_ms = 0
[machine]
sockets = 1
cores_per_socket = 4
threads_per_core = 1
[costs]
hlt_exit_ns = 20000
[host]
scheduler = "cfs"
housekeeping_interval_ns = 0
[host.kvm]
halt_poll_ns = 0
ple = false
[[vm]]
name = "vm"
vcpus = 2
[vm.workload]
type = "lockloop"
)";

constexpr std::int64_t kExitNs = 20000;

scenario::Scenario two_vcpus() {
  return scenario::parse_scenario(kTwoVcpus, "kick_latch_test.toml", {});
}

// Host counters of the one guest, as they stand now.
struct Seen {
  std::uint64_t exits_hlt = 0;
  std::uint64_t halt_blocks = 0;
  std::uint64_t halt_polls_ok = 0;
};

Seen seen(const Simulation& sim) {
  const HostCounters& c = *sim.platform().guest_host_counters(0);
  return Seen{c.exits_hlt, c.halt_blocks, c.halt_polls_ok};
}

// Busy in short pieces until wall time `until`.
void compute_until(std::int64_t until) {
  while (SimEnv::now_ns() < until) workload::api::compute(1000);
}

TEST(KickLatch, AKickBeforeAnIdleHaltMakesThatHaltReturnAtOnceAndPayItsExit) {
  const scenario::Scenario sc = two_vcpus();
  Simulation sim(sc, std::make_unique<KvmPlatform>(sc));
  Guest& g = sim.add_guest("vm", sc.vms[0].guest, 2);
  std::int64_t halted_at = -1;  // when vCPU 1's task blocked, leaving it to the idle loop
  Seen before, in_exit, after;
  bool latch_at_block = false;
  // vCPU 1: runs while it is kicked, then blocks for good.
  g.create_task("sleeper", 1, [&] {
    compute_until(200'000);
    latch_at_block = g.vcpu(1).pv_unhalted;
    before = seen(sim);
    halted_at = SimEnv::now_ns();
    SimEnv::prepare_block();
    SimEnv::block();
  });
  // vCPU 0: kicks vCPU 1 while it runs, then watches its idle loop.
  g.create_task("kicker", 0, [&] {
    compute_until(100'000);
    SimEnv::pv_kick(1);
    while (halted_at < 0) workload::api::compute(1000);
    compute_until(halted_at + kExitNs / 2);
    in_exit = seen(sim);
    compute_until(halted_at + 2 * kExitNs);
    after = seen(sim);
    compute_until(1'900'000);
  });
  sim.run();
  ASSERT_GE(halted_at, 200'000);
  EXPECT_TRUE(latch_at_block);  // the kick found vCPU 1 running: it was latched
  // The idle loop's first HLT exits and returns at once: counted, but no block or poll.
  EXPECT_EQ(in_exit.exits_hlt, before.exits_hlt + 1);
  EXPECT_EQ(in_exit.halt_blocks, before.halt_blocks);
  EXPECT_EQ(in_exit.halt_polls_ok, before.halt_polls_ok);
  // Once the exit and re-entry are paid, the idle loop halts again, and this time blocks.
  EXPECT_EQ(after.exits_hlt, before.exits_hlt + 2);
  EXPECT_EQ(after.halt_blocks, before.halt_blocks + 1);
  EXPECT_FALSE(g.vcpu(1).pv_unhalted);  // consumed
  EXPECT_TRUE(g.vcpu(1).halted);
}

TEST(KickLatch, AKickBeforePvWaitMakesItsHaltReturnAtOnceAtTheExitsCost) {
  const scenario::Scenario sc = two_vcpus();
  Simulation sim(sc, std::make_unique<KvmPlatform>(sc));
  Guest& g = sim.add_guest("vm", sc.vms[0].guest, 2);
  SimEnv::atomic<std::uint8_t> byte{};  // never changes: only the latch ends the wait
  byte.hw_store(1);
  std::int64_t waited = -1;
  Seen before, after;
  g.create_task("waiter", 1, [&] {
    compute_until(200'000);
    before = seen(sim);
    const std::int64_t t0 = SimEnv::now_ns();
    SimEnv::pv_wait(&byte, 1);
    waited = SimEnv::now_ns() - t0;
    after = seen(sim);
    compute_until(1'900'000);
  });
  g.create_task("kicker", 0, [&] {
    compute_until(100'000);
    SimEnv::pv_kick(1);
    compute_until(1'900'000);
  });
  sim.run();
  EXPECT_EQ(after.exits_hlt, before.exits_hlt + 1);
  EXPECT_EQ(after.halt_blocks, before.halt_blocks);
  EXPECT_EQ(after.halt_polls_ok, before.halt_polls_ok);
  // The wait took the exit and re-entry, plus a load of the lock byte.
  EXPECT_GE(waited, kExitNs);
  EXPECT_LT(waited, kExitNs + 2000);
  EXPECT_FALSE(g.vcpu(1).pv_unhalted);
}

TEST(KickLatch, AKickToAnIdleVcpuEndsItsHaltAndTheIdleLoopHaltsAgain) {
  // vcpu_block() finds a kicked idle vCPU runnable and clears pv_unhalted; the guest goes on
  // after its HLT, finds nothing to run and halts again: one more exit, and nothing latched.
  const scenario::Scenario sc = two_vcpus();
  Simulation sim(sc, std::make_unique<KvmPlatform>(sc));
  Guest& g = sim.add_guest("vm", sc.vms[0].guest, 2);
  std::int64_t halted_at = -1;
  Seen before, after;
  g.create_task("sleeper", 1, [&] {
    compute_until(50'000);
    halted_at = SimEnv::now_ns();
    SimEnv::prepare_block();
    SimEnv::block();
  });
  g.create_task("kicker", 0, [&] {
    compute_until(500'000);
    ASSERT_GE(halted_at, 0);
    before = seen(sim);
    SimEnv::pv_kick(1);
    compute_until(1'000'000);
    after = seen(sim);
    compute_until(1'900'000);
  });
  sim.run();
  EXPECT_EQ(after.exits_hlt, before.exits_hlt + 1);
  EXPECT_EQ(after.halt_blocks, before.halt_blocks + 1);
  EXPECT_FALSE(g.vcpu(1).pv_unhalted);
  EXPECT_TRUE(g.vcpu(1).halted);
}

TEST(KickLatch, OnBareMetalTheIdleHaltConsumesTheLatchAtNoCost) {
  const scenario::Scenario sc = two_vcpus();
  Simulation sim(sc);  // bare metal
  Guest& g = sim.add_guest("machine", sc.vms[0].guest, 2);
  bool latch_at_block = false;
  g.create_task("sleeper", 1, [&] {
    compute_until(200'000);
    latch_at_block = g.vcpu(1).pv_unhalted;
    SimEnv::prepare_block();
    SimEnv::block();
  });
  g.create_task("kicker", 0, [&] {
    compute_until(100'000);
    SimEnv::pv_kick(1);
    compute_until(1'900'000);
  });
  sim.run();
  EXPECT_TRUE(latch_at_block);
  EXPECT_FALSE(g.vcpu(1).pv_unhalted);  // the idle loop's HLT took it, not a later pv_wait
  EXPECT_TRUE(g.vcpu(1).halted);
}

}  // namespace
}  // namespace pvlock::sim
