// SPDX-License-Identifier: GPL-2.0-only
// Separate guests are separate: the two VMs of examples/overcommit-lockloop.toml (16 vCPUs
// each on 16 pCPUs), both on the kernel's pvqspinlock, each get a kernel instance of their
// own -- per-CPU area (qnodes, pv_kick_time, the kernel's lockevents array), PV hash table,
// counters. If the kernel's storage were shared, vCPU i of both VMs would queue on one qnode,
// both VMs' locks would be hashed into one table and the kernel's counters would hold the
// sum of both VMs' events; the checks below fail then.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"
#include "shim_probe.h"
#include "sim/guest/guest.hpp"

namespace pvlock {
namespace {

bool overlap(const void* a, std::size_t na, const void* b, std::size_t nb) {
  const auto* pa = static_cast<const unsigned char*>(a);
  const auto* pb = static_cast<const unsigned char*>(b);
  return pa < pb + nb && pb < pa + na;
}

int kernel_event(LockEvent e) {
  const std::string name(lock_event_name(e));
  for (int k = 0; k < pvk_lock_event_count(); ++k)
    if (name == pvk_lock_event_name(k)) return k;
  return -1;
}

TEST(KernelIsolation, TwoSimulatedVmsHaveSeparateQnodesHashTablesAndCounters) {
  const std::string path = std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml";
  const scenario::Scenario sc = scenario::load_scenario_file(
      path, {"vm[0].guest.lock=kernel:pvqspinlock", "run.duration_ms=20", "run.warmup_ms=0"});
  std::vector<pvk_vm> vms;
  std::vector<const kernel::Instance*> instances;
  std::vector<LockEventCounts> counts;
  harness::run_scenario(sc, [&](sim::Simulation&, std::vector<harness::VmRun>& runs) {
    for (harness::VmRun& r : runs) {
      const kernel::Instance& in = r.guest->global<kernel::BuildInstance<kernel::Stock>>();
      instances.push_back(&in);
      vms.push_back(in.vm);
      counts.push_back(r.guest->counters());
    }
  });
  ASSERT_EQ(vms.size(), 2u);
  for (std::size_t v = 0; v < 2; ++v) {
    ASSERT_NE(vms[v].percpu, nullptr) << "vm" << v << " never set its kernel instance up";
    ASSERT_NE(vms[v].pv_lock_hash, nullptr) << "__pv_init_lock_hash() did not run for vm" << v;
    EXPECT_EQ(vms[v].nr_cpus, 16) << "one per-CPU copy per vCPU of vm" << v;
    // Both VMs' PV paths ran: queue nodes, hash table and counters were used.
    EXPECT_GT(counts[v][LockEvent::pv_wait_node], 0u) << "vm" << v;
    EXPECT_GT(counts[v][LockEvent::pv_kick_unlock], 0u) << "vm" << v;
  }
  EXPECT_NE(instances[0], instances[1]);
  // Per-CPU areas (every DEFINE_PER_CPU of the kernel files: qnodes, OSQ nodes,
  // pv_kick_time, lockevents) are disjoint.
  EXPECT_FALSE(
      overlap(vms[0].percpu, vms[0].percpu_stride * 16, vms[1].percpu, vms[1].percpu_stride * 16));
  // So are the PV hash tables (16-byte entries: a lock pointer and a node pointer).
  EXPECT_FALSE(overlap(vms[0].pv_lock_hash, std::size_t{16} << vms[0].pv_lock_hash_bits,
                       vms[1].pv_lock_hash, std::size_t{16} << vms[1].pv_lock_hash_bits));
  // The kernel's own lockevents of each instance hold exactly that VM's events, the ones
  // pvlock counted for it (a shared array would hold the sum of both VMs').
  for (const LockEvent e : {LockEvent::lock_slowpath, LockEvent::pv_wait_node,
                            LockEvent::pv_kick_unlock, LockEvent::pv_lock_stealing}) {
    const int k = kernel_event(e);
    ASSERT_GE(k, 0) << lock_event_name(e);
    for (std::size_t v = 0; v < 2; ++v)
      EXPECT_EQ(probe_instance_lockevent(vms[v].percpu, vms[v].percpu_stride, vms[v].nr_cpus, k),
                counts[v][e])
          << lock_event_name(e) << ", vm" << v;
  }
}

}  // namespace
}  // namespace pvlock
