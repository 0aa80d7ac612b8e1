// SPDX-License-Identifier: GPL-2.0-only
// What a hypervisor counts over a run: exits, halt polling, kicks and directed yields,
// preemptions, wake-up placement, steal. The platform seam (sim/platform.hpp) hands them out,
// so the run harness reports a host without knowing which host it is; bare metal has none.
#pragma once

#include <cstdint>

namespace pvlock::sim {

// Where a kick found its target vCPU: on its pCPU (polling, or switched in by the wake-up:
// onto an idle pCPU or preempting), woken and queued behind another thread, or runnable
// already (preempted, or woken by an interrupt it could not take) and queued; each queued
// path with or without a kick-time yield_to() that went through (seed 001's boost).
enum class KickPath { on_cpu, queued, queued_yielded, runnable, runnable_yielded };
inline constexpr int kKickPaths = 5;
// Their keys in the run JSON (host.kick_to_entry), in enum order.
inline constexpr const char* kKickPathNames[kKickPaths] = {"on_cpu", "queued", "queued_yielded",
                                                           "runnable", "runnable_yielded"};

// Counted from time 0 and zeroed when the measured window starts (measure_start()), so a
// run's totals cover the window and a sampler (harness/series.hpp) also sees the warm-up.
struct HostCounters {
  std::uint64_t exits_hlt = 0;
  std::uint64_t exits_kick = 0;
  std::uint64_t exits_ipi = 0;
  std::uint64_t exits_ple = 0;
  std::uint64_t exits_sched_yield = 0;  // KVM_HC_SCHED_YIELD hypercalls
  std::uint64_t halt_polls_ok = 0;      // woken while polling
  std::uint64_t halt_blocks = 0;        // gave up the pCPU
  // ... of which polls cut short because another thread joined the pCPU's run queue (the
  // poll loop's single_task_running() test): the vCPU blocks, it is not preempted.
  std::uint64_t halt_polls_given_way = 0;
  // A blocked vCPU woken by an interrupt it cannot take (halted with IRQs off): the thread
  // runs only to find kvm_vcpu_check_block() still false and blocks again.
  std::uint64_t halt_masked_wakes = 0;
  std::uint64_t kicks = 0;
  std::uint64_t kick_yields_tried = 0;
  std::uint64_t kick_yields = 0;
  // How the kick-time yields that did not go through ended: the target still TASK_WAKING on
  // another socket's wake list (TTWU_QUEUE), both run queues single (-ESRCH), or yield_to()
  // refused (target already running, or not on a run queue). And of those that went through:
  // the target waiting on the kicker's own pCPU, the target switched in by the kick itself
  // (not on its CPU yet), the target still waiting after the yield (its pCPU picked another
  // thread: the next-buddy mark lost pick_next_entity()'s vruntime test), and the kicker
  // losing its pCPU with it.
  std::uint64_t kick_yields_lost_ttwu = 0;
  std::uint64_t kick_yields_single = 0;
  std::uint64_t kick_yields_refused = 0;
  std::uint64_t kick_yields_onto_kicker_pcpu = 0;
  std::uint64_t kick_yields_to_switching_in = 0;
  std::uint64_t kick_yields_target_waiting = 0;
  std::uint64_t kick_yields_kicker_descheduled = 0;
  std::uint64_t ple_yields_tried = 0;
  std::uint64_t ple_yields = 0;
  // KVM_HC_SCHED_YIELD's yield_to() (PV sched yield guests, after call-function IPIs).
  std::uint64_t sched_yields_tried = 0;
  std::uint64_t sched_yields = 0;
  // A vCPU entering on another pCPU than the one it last ran on. Free in the model; on a
  // real host it costs a VMCLEAR IPI to the old pCPU, a VPID flush and cold caches.
  std::uint64_t migrations = 0;
  // Every switch of a pCPU to a vCPU thread, and those whose vCPU lost the pCPU again before
  // it entered the guest (a reschedule during the switch-in: KVM's vcpu_enter_guest() sees
  // need_resched() and cancels the entry). In a storm of directed yields they say how long
  // a vCPU keeps a pCPU and how many switch-ins buy the guest nothing.
  std::uint64_t switch_ins = 0;
  std::uint64_t switch_ins_cancelled = 0;
  std::uint64_t preemptions = 0;              // involuntary deschedules of a vCPU
  std::uint64_t lock_holder_preemptions = 0;  // ... while it held a spinlock
  std::uint64_t lock_waiter_preemptions = 0;  // ... while it waited for one
  // What the host scheduler did with each woken vCPU (kick, interrupt, timer): placed on an
  // idle pCPU, preempting the running thread at once, or queued. A queued vCPU's wait ends
  // at its pCPU's next schedule(), caused by a yield there (PLE or kick-time directed yield,
  // sched_yield), a block (HLT), the tick (slice over, or an idle pCPU pulling it) or
  // balancing.
  std::uint64_t wakes_onto_idle = 0;
  std::uint64_t wakes_preempting = 0;
  std::uint64_t wakes_queued = 0;
  std::int64_t wake_queued_wait_ns = 0;  // summed over queued wakes that ran in the window
  std::uint64_t wake_waits_ended = 0;    // ... their count
  std::uint64_t wake_waits_ended_by_yield = 0;
  std::uint64_t wake_waits_ended_by_block = 0;
  std::uint64_t wake_waits_ended_by_tick = 0;
  std::int64_t steal_ns = 0;  // runnable but not running, counted at schedule-in
  // The host half of a kick's latency: from the kick hypercall to the kicked vCPU's guest
  // entry, by where the kick found it (KickPath). A queued lock waiter under the 2017
  // wait-early rule advances one such latency per waiter, so the collapse's pace is set here.
  struct KickEntry {
    std::uint64_t n = 0;
    std::int64_t ns = 0;
    std::uint64_t over_1ms = 0;
  };
  KickEntry kick_entry[kKickPaths];
};

}  // namespace pvlock::sim
