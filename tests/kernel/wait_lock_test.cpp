// SPDX-License-Identifier: GPL-2.0-only
// The kernel's own qspinlock code as the spinlock of a guest's other locks: a mutex whose
// wait_lock is kernel:pvqspinlock runs __pv_queued_spin_lock_slowpath() for its wait list,
// in the guest's own kernel instance. The run is the over-committed mutex of
// tests/workload/wait_lock_test.cpp: two 4-vCPU VMs on 4 pCPUs, a host that also preempts
// between any two memory accesses, so that wait_lock holders are preempted inside their
// critical sections. The kernel's waiters halt only after SPIN_THRESHOLD (1 << 15) spins or
// early, behind a halted predecessor (6.1) or, with the 2017 rule of the
// wait-early-preempted variant, behind a preempted one: with that variant the waiters
// queued behind a preempted wait_lock holder halt in pv_wait_node() within the run.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "harness/run.hpp"
#include "output/lockstat_json.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"
#include "shim_probe.h"
#include "sim/guest/guest.hpp"
#include "sim/guest/sim_env.hpp"

namespace pvlock {
namespace {

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
[vm.workload]
type = "lockloop"
lock = "mutex"
tasks_per_vcpu = 2
compute_ns = 3000
hold_ns = 3000
)";

int kernel_event(LockEvent e) {
  const std::string name(lock_event_name(e));
  for (int k = 0; k < pvk_lock_event_count(); ++k)
    if (name == pvk_lock_event_name(k)) return k;
  return -1;
}

// The kernel instance of the build whose pvqspinlock is `lock`, in guest g.
const kernel::Instance* instance_of(sim::Guest& g, std::string_view lock) {
  const kernel::Instance* out = nullptr;
  [&]<class... Bs>(std::tuple<Bs...>*) {
    ((lock == Bs::kPvqspinlock ? (void)(out = &g.global<kernel::BuildInstance<Bs>>()) : void()),
     ...);
  }(static_cast<kernel::Builds*>(nullptr));
  return out;
}

struct VmSeen {
  pvk_vm vm{};
  const kernel::Instance* instance = nullptr;
  LockEventCounts counts{};
  RawSpinlockKind wait_lock{};
};

// Runs the mutex scenario with `sets`, recording each VM's instance of the build of `lock`
// and its lock_stat rows (in `lockstat`, by VM name).
std::vector<VmSeen> run_mutex(const std::vector<std::string>& sets, std::string_view lock,
                              nlohmann::ordered_json& lockstat) {
  const scenario::Scenario sc = scenario::parse_scenario(kOvercommittedMutex, "w.toml", sets);
  std::vector<VmSeen> seen;
  harness::run_scenario(sc, [&](sim::Simulation&, std::vector<harness::VmRun>& runs) {
    for (harness::VmRun& r : runs) {
      const kernel::Instance* in = instance_of(*r.guest, lock);
      if (in == nullptr) throw std::logic_error("no build has " + std::string(lock));
      seen.push_back({in->vm, in, r.guest->counters(), r.guest->policies().raw_spinlock});
      lockstat[r.name] = output::lockstat_json(r.guest->lock_stats());
    }
  });
  return seen;
}

const nlohmann::ordered_json* lockstat_row(const nlohmann::ordered_json& j, const std::string& vm,
                                           const std::string& name) {
  for (const auto& r : j.at(vm))
    if (r.at("name") == name) return &r;
  return nullptr;
}

// `halts`: the waiters must have halted in the kernel's pv_wait_node() and been kicked.
void expect_kernel_wait_lock(const std::vector<VmSeen>& seen, const nlohmann::ordered_json& j,
                             bool halts) {
  ASSERT_EQ(seen.size(), 2u);
  for (std::size_t v = 0; v < 2; ++v) {
    const VmSeen& s = seen[v];
    EXPECT_EQ(s.wait_lock, RawSpinlockKind::external) << "vm" << v;
    ASSERT_NE(s.vm.percpu, nullptr) << "vm" << v << " never ran the kernel's code";
    ASSERT_NE(s.vm.pv_lock_hash, nullptr) << "__pv_init_lock_hash() did not run for vm" << v;
    // The mutex went through its slow path, so its waiters and unlockers took wait_lock
    // and queued in the kernel's code; with `halts`, waiters behind a preempted wait_lock
    // holder halted in its pv_wait_node() and were kicked by its
    // __pv_queued_spin_unlock_slowpath().
    EXPECT_GT(s.counts[LockEvent::mutex_sleep], 0u) << "vm" << v;
    EXPECT_GT(s.counts[LockEvent::lock_slowpath], 0u) << "vm" << v;
    if (halts) {
      EXPECT_GT(s.counts[LockEvent::pv_wait_node], 0u) << "vm" << v;
      EXPECT_GT(s.counts[LockEvent::pv_wait_early], 0u) << "vm" << v;
      EXPECT_GT(s.counts[LockEvent::pv_kick_unlock], 0u) << "vm" << v;
    }
    EXPECT_EQ(s.counts[LockEvent::virt_spin_lock], 0u) << "vm" << v;
    // Every spinlock event of the VM is the kernel's: its own lockevents array (of this
    // VM's instance alone) holds exactly what pvlock counted for the VM.
    for (const LockEvent e :
         {LockEvent::lock_pending, LockEvent::lock_slowpath, LockEvent::pv_wait_node,
          LockEvent::pv_wait_head, LockEvent::pv_wait_early, LockEvent::pv_kick_unlock,
          LockEvent::pv_lock_stealing}) {
      const int k = kernel_event(e);
      ASSERT_GE(k, 0) << lock_event_name(e);
      EXPECT_EQ(probe_instance_lockevent(s.vm.percpu, s.vm.percpu_stride, s.vm.nr_cpus, k),
                s.counts[e])
          << lock_event_name(e) << ", vm" << v;
    }
    // lock_stat keeps the wait_lock's row of its own.
    const auto* row = lockstat_row(j, "vm" + std::to_string(v), "lockloop.lock.wait_lock");
    ASSERT_NE(row, nullptr) << "vm" << v;
    EXPECT_GT(row->at("acquisitions").get<std::uint64_t>(), 0u) << "vm" << v;
    EXPECT_GT(row->at("contentions").get<std::uint64_t>(), 0u) << "vm" << v;
  }
  // Separate guests are separate: each VM's wait_locks queue on its own qnodes.
  EXPECT_NE(seen[0].instance, seen[1].instance);
  EXPECT_NE(seen[0].vm.percpu, seen[1].vm.percpu);
  EXPECT_NE(seen[0].vm.pv_lock_hash, seen[1].vm.pv_lock_hash);
}

constexpr const char* kVariant = "kernel:wait-early-preempted/pvqspinlock";

bool variant_built() {
  bool found = false;
  with_lock<sim::SimEnv>(kVariant, [&]<class L>(const LockInfo&) { found = true; });
  return found;
}

TEST(KernelWaitLock, MutexWaitLockKnobRunsTheKernelsPvqspinlockPerVm) {
  if (!variant_built()) GTEST_SKIP() << kVariant << ": " << missing_lock_reason(kVariant);
  nlohmann::ordered_json j;
  const auto seen =
      run_mutex({std::string("vm[0].guest.wait_lock=") + kVariant, "faults.preempt_at_access=0.05"},
                kVariant, j);
  expect_kernel_wait_lock(seen, j, true);
}

// A guest whose lock is the kernel's pvqspinlock was built with it: its raw_spinlock_t,
// and so its mutexes' wait_lock, is that code too.
TEST(KernelWaitLock, GuestOnAKernelSpinlockGivesItToItsMutexes) {
  nlohmann::ordered_json j;
  const auto seen = run_mutex({"vm[0].guest.lock=kernel:pvqspinlock"}, "kernel:pvqspinlock", j);
  expect_kernel_wait_lock(seen, j, false);
  // So does the knob, and the runs are the same.
  nlohmann::ordered_json k;
  const auto knob =
      run_mutex({"vm[0].guest.wait_lock=kernel:pvqspinlock"}, "kernel:pvqspinlock", k);
  ASSERT_EQ(knob.size(), 2u);
  for (std::size_t v = 0; v < 2; ++v)
    EXPECT_EQ(knob[v].counts[LockEvent::lock_slowpath], seen[v].counts[LockEvent::lock_slowpath]);
  EXPECT_EQ(j.dump(), k.dump());
}

// Without either the same mutex runs pvlock's pvqspinlock: the kernel's code never runs.
TEST(KernelWaitLock, DefaultWaitLockLeavesTheKernelsCodeIdle) {
  nlohmann::ordered_json j;
  const auto seen = run_mutex({}, "kernel:pvqspinlock", j);
  ASSERT_EQ(seen.size(), 2u);
  for (const VmSeen& s : seen) {
    EXPECT_EQ(s.wait_lock, RawSpinlockKind::pvqspinlock);
    EXPECT_EQ(s.vm.percpu, nullptr);
    EXPECT_GT(s.counts[LockEvent::lock_slowpath], 0u);
  }
}

TEST(KernelWaitLock, RunsAreDeterministic) {
  const auto sc = scenario::parse_scenario(kOvercommittedMutex, "w.toml",
                                           {"vm[0].guest.wait_lock=kernel:pvqspinlock"});
  auto a = harness::run_to_json(sc);
  auto b = harness::run_to_json(sc);
  a.erase("perf");
  b.erase("perf");
  EXPECT_EQ(a.dump(), b.dump());
}

TEST(KernelWaitLock, ResolvedFromTheGuestsLock) {
  scenario::GuestSpec g;
  using K = RawSpinlockKind;
  for (const char* name : {"kernel:qspinlock", "kernel:pvqspinlock"}) {
    const harness::WaitLock w = harness::resolve_wait_lock(g, name, true);
    EXPECT_EQ(w.kind, K::external) << name;
    EXPECT_EQ(w.name, name);
    EXPECT_FALSE(w.boot) << name;
  }
  // The kernel's OSQ is no raw_spinlock_t: the kernel's choice at boot.
  const harness::WaitLock osq = harness::resolve_wait_lock(g, "kernel:osq", true);
  EXPECT_EQ(osq.kind, K::pvqspinlock);
  EXPECT_TRUE(osq.boot);
  // Every variant's (pv)qspinlock is one too.
  for (const LockInfo& i : lock_infos<sim::SimEnv>()) {
    const std::string n(i.name);
    if (!n.starts_with("kernel:") || n.ends_with("/osq") || n == "kernel:osq") continue;
    EXPECT_EQ(harness::resolve_wait_lock(g, n, false).kind, K::external) << n;
  }
}

TEST(KernelWaitLock, AnUnusableWaitLockIsAnError) {
  for (const char* bad : {"kernel:no-such/pvqspinlock", "kernel:osq"}) {
    const auto sc = scenario::parse_scenario(kOvercommittedMutex, "w.toml",
                                             {std::string("vm[0].guest.wait_lock=") + bad});
    try {
      harness::run_to_json(sc);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("wait_lock"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pvlock
