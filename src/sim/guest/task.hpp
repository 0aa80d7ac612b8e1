// SPDX-License-Identifier: GPL-2.0-only
// A guest task (struct task_struct): a fiber running a workload program on one vCPU.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "pvlock/env/lock_events.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/rng.hpp"
#include "sim/engine/time.hpp"
#include "sim/guest/profile.hpp"
#include "sim/guest/sim_atomic.hpp"
#include "sim/machine/coherence.hpp"

namespace pvlock::sim {

class Guest;
struct Vcpu;
struct LockWatch;

inline constexpr int kMaxWatchedLines = 8;
inline constexpr int kMaxRecordedCounts = 4;

struct Task {
  // Simulated memory first: each word on its own line, as fields of a task_struct that
  // other CPUs poll (p->on_cpu in owner spinning) must not share a line with our state.
  struct alignas(64) Word {
    SimAtomic<std::uint32_t> v{};
  };
  Word on_cpu;  // p->on_cpu
  Word state;   // TASK_RUNNING (0) / TASK_UNINTERRUPTIBLE (1)

  int id = 0;  // per guest
  Guest* guest = nullptr;
  Vcpu* vcpu = nullptr;
  std::string name;
  Fiber fiber;
  Rng rng;
  std::function<void()> program;

  // Local time not yet elapsed (charged by compute and memory accesses): the next shared
  // memory operation waits until it has passed in running time.
  double pending_ns = 0;
  Sym sym = Sym::workload;
  int preempt_count = 0;
  bool irqs_off = false;
  bool blocked = false;  // off the run queue, waiting for wake()
  bool on_rq = false;
  Task* rq_next = nullptr;
  Time vruntime = 0;  // scheduler = cfs

  // Lazy spinning: what one evaluation of a spin condition read and charged.
  bool recording = false;
  int rec_lines = 0;
  bool rec_overflow = false;
  std::array<std::uint64_t, kMaxWatchedLines> rec_keys{};
  std::array<std::uint32_t, kMaxWatchedLines> rec_versions{};
  double rec_hit_ns = 0;       // its cost once every line is cached (l1 hits + extra charges)
  bool rec_missed = false;     // a load of the condition missed: it sampled the line at issue
  double rec_queue_ns = 0;     // ...behind a write still in flight on that line, this long
  bool loads_settled = false;  // re-reading a condition's loads as they completed: no cost
  double rec_call_ns = 0;      // the part of rec_hit_ns spent in vcpu_is_preempted()
  int rec_count_n = 0;
  std::array<std::pair<LockEvent, std::uint64_t>, kMaxRecordedCounts> rec_counts{};
  std::array<WatchNode, kMaxWatchedLines> watch{};
  bool watch_fired = false;
  // While sleeping in spin_sleep: when the sleep began (vCPU running time, including the
  // folded-in pending time spin_pre) and the iteration length, so that a wake-up lands on
  // the end of the PAUSE in progress.
  Time spin_rt0 = 0;
  Time spin_pre = 0;
  double spin_per_iter = 0;

  // The first address a spin loop's periodic check read (pv_wait_early reads prev->state
  // first): lets the tracer name the predecessor a wait-early decision looked at.
  bool in_check = false;
  const void* check_addr = nullptr;
  // Liveness watchdog (sim/watchdog/): when the workload last reported a completed
  // operation (only tasks that report are watched), the lock it is waiting for, and the
  // spin site it last entered during the current acquisition (-1: none yet). host_wait:
  // how much of the time since last_progress it waited for a CPU (its vCPU, or the vCPU of
  // the task it waits behind, runnable but off its pCPU; itself or that task runnable on a
  // guest run queue), which does not count.
  Time last_progress = 0;
  Time host_wait = 0;
  bool progress_tracked = false;
  const LockWatch* waiting_for = nullptr;
  int spin_site = -1;
  // Waiting for a CPU inside the guest (runnable on its vCPU's run queue while the vCPU runs
  // another task): since when, in all, and how much over the last watchdog check period.
  // The same for the time queued as a sleeping lock's woken waiter (woken_for_lock: woken
  // while waiting for the lock woken_for, and not yet run since), whom the unlock chose and
  // everyone asleep behind it waits for.
  Time rq_since = 0;
  Time rq_wait = 0;
  Time rq_wait_at_check = 0;
  Time rq_delta = 0;
  Time woken_rq_wait = 0;
  Time woken_rq_at_check = 0;
  Time woken_rq_delta = 0;
  const LockWatch* woken_for = nullptr;
  bool woken_for_lock = false;

  // Inside a system call (or exit, fork, a fault): under the guest's preempt = "none" the
  // tick's need_resched waits for the return to user mode (or a sleep).
  bool in_kernel = false;

  // Parked at the yield of Guest::wait() (whose running-time target is the vCPU's
  // wait_target_rt), and whether that wait ends when a watched line is written: what
  // Guest::rearm_wait() needs to take the loop's next step without the fiber.
  bool in_wait = false;
  bool wait_watchable = false;

  bool preemptible() const { return preempt_count == 0 && !irqs_off; }
};

}  // namespace pvlock::sim
