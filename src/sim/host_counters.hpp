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

// Every host counter, once: X(field, type, json_pointer, meaning). The list makes the
// struct's fields, the run JSON's "host" object (harness/run.cpp, in this order; a pointer
// with two levels nests) and their table in the user guide
// (docs/guide/explaining-a-run.md, scripts/x-list-docs.py), so a field and its key
// cannot drift apart.
// Counted from time 0 and zeroed when the measured window starts (measure_start()), so a
// run's totals cover the window and a sampler (harness/series.hpp) also sees the warm-up.
#define PVLOCK_HOST_COUNTERS(X)                                                              \
  X(exits_hlt, std::uint64_t, "/exits/hlt", "HLT exits (idle loop and pv_wait)")             \
  X(exits_kick, std::uint64_t, "/exits/kick", "KVM_HC_KICK_CPU hypercalls")                  \
  X(exits_ipi, std::uint64_t, "/exits/ipi", "IPI sends (APIC write exits)")                  \
  X(exits_ple, std::uint64_t, "/exits/ple", "pause-loop exits")                              \
  X(exits_sched_yield, std::uint64_t, "/exits/sched_yield", "KVM_HC_SCHED_YIELD hypercalls") \
  X(halt_polls_ok, std::uint64_t, "/halt_polls_ok", "halts woken while polling")             \
  X(halt_blocks, std::uint64_t, "/halt_blocks", "halts that gave the pCPU up")               \
  /* polls cut short because another thread joined the pCPU's run queue (the poll loop's */  \
  /* single_task_running() test): the vCPU blocks, it is not preempted */                    \
  X(halt_polls_given_way, std::uint64_t, "/halt_polls_given_way", "polls given way")         \
  /* a blocked vCPU woken by an interrupt it cannot take (halted with IRQs off): the */      \
  /* thread runs only to find kvm_vcpu_check_block() still false and blocks again */         \
  X(halt_masked_wakes, std::uint64_t, "/halt_masked_wakes", "wakes into a masked halt")      \
  X(kicks, std::uint64_t, "/kicks", "kicks delivered")                                       \
  X(kick_yields_tried, std::uint64_t, "/kick_yields/tried", "kick-time yield_to() tried")    \
  X(kick_yields, std::uint64_t, "/kick_yields/done", "kick-time yield_to() done")            \
  /* how the tried yields that did not go through ended */                                   \
  X(kick_yields_lost_ttwu, std::uint64_t, "/kick_yields/lost_to_ttwu_queue",                 \
    "target still TASK_WAKING on another socket's wake list (TTWU_QUEUE)")                   \
  X(kick_yields_single, std::uint64_t, "/kick_yields/both_single",                           \
    "both run queues single (-ESRCH)")                                                       \
  X(kick_yields_refused, std::uint64_t, "/kick_yields/refused",                              \
    "yield_to() refused: target running already, or on no run queue")                        \
  /* and of those that went through */                                                       \
  X(kick_yields_onto_kicker_pcpu, std::uint64_t, "/kick_yields/onto_kicker_pcpu",            \
    "target waiting on the kicker's own pCPU")                                               \
  X(kick_yields_to_switching_in, std::uint64_t, "/kick_yields/to_switching_in",              \
    "target switched in by the kick itself")                                                 \
  X(kick_yields_target_waiting, std::uint64_t, "/kick_yields/target_left_waiting",           \
    "target still waiting after the yield (the next-buddy mark lost the pick)")              \
  X(kick_yields_kicker_descheduled, std::uint64_t, "/kick_yields/kicker_descheduled",        \
    "kicker lost its pCPU with the yield")                                                   \
  X(ple_yields_tried, std::uint64_t, "/ple_yields/tried", "kvm_vcpu_on_spin() yields tried") \
  X(ple_yields, std::uint64_t, "/ple_yields/done", "kvm_vcpu_on_spin() yields done")         \
  X(sched_yields_tried, std::uint64_t, "/sched_yields/tried",                                \
    "KVM_HC_SCHED_YIELD yield_to() tried (PV sched yield guests)")                           \
  X(sched_yields, std::uint64_t, "/sched_yields/done", "KVM_HC_SCHED_YIELD yield_to() done") \
  /* free in the model; on a real host a VMCLEAR IPI to the old pCPU, a VPID flush and */    \
  /* cold caches */                                                                          \
  X(migrations, std::uint64_t, "/migrations", "vCPU entries on another pCPU than its last")  \
  X(switch_ins, std::uint64_t, "/switch_ins/n", "pCPU switches to a vCPU thread")            \
  /* a reschedule during the switch-in: vcpu_enter_guest() sees need_resched() */            \
  X(switch_ins_cancelled, std::uint64_t, "/switch_ins/cancelled_before_entry",               \
    "switch-ins whose vCPU lost the pCPU before it entered the guest")                       \
  X(preemptions, std::uint64_t, "/preemptions", "involuntary deschedules of a vCPU")         \
  X(lock_holder_preemptions, std::uint64_t, "/lock_holder_preemptions",                      \
    "... while it held a spinlock")                                                          \
  X(lock_waiter_preemptions, std::uint64_t, "/lock_waiter_preemptions",                      \
    "... while it waited for one")                                                           \
  /* what the host scheduler did with each woken vCPU (kick, interrupt, timer); a queued */  \
  /* vCPU's wait ends at its pCPU's next schedule(): a yield there (PLE or kick-time */      \
  /* directed yield, sched_yield), a block (HLT), the tick, or balancing */                  \
  X(wakes_onto_idle, std::uint64_t, "/wakeups/onto_idle", "woken onto an idle pCPU")         \
  X(wakes_preempting, std::uint64_t, "/wakeups/preempting", "woken, preempting at once")     \
  X(wakes_queued, std::uint64_t, "/wakeups/queued", "woken and queued")                      \
  X(wake_queued_wait_ns, std::int64_t, "/wakeups/queued_wait_ns",                            \
    "summed wait of queued wakes that ran in the window (ns)")                               \
  X(wake_waits_ended, std::uint64_t, "/wakeups/queued_ran", "... their count")               \
  X(wake_waits_ended_by_yield, std::uint64_t, "/wakeups/queued_ended_by/yield",              \
    "queued waits ended by a yield")                                                         \
  X(wake_waits_ended_by_block, std::uint64_t, "/wakeups/queued_ended_by/block",              \
    "queued waits ended by a block")                                                         \
  X(wake_waits_ended_by_tick, std::uint64_t, "/wakeups/queued_ended_by/tick",                \
    "queued waits ended by the tick")                                                        \
  X(steal_ns, std::int64_t, "/steal_ns", "runnable but not running, counted at schedule-in (ns)")

struct HostCounters {
#define PVLOCK_HOST_COUNTER_FIELD(field, type, pointer, meaning) type field = 0;
  PVLOCK_HOST_COUNTERS(PVLOCK_HOST_COUNTER_FIELD)
#undef PVLOCK_HOST_COUNTER_FIELD
  // The host half of a kick's latency: from the kick hypercall to the kicked vCPU's guest
  // entry, by where the kick found it (KickPath). A queued lock waiter under the 2017
  // wait-early rule advances one such latency per waiter, so the collapse's pace is set here.
  // (An array, so outside the scalar list; the run JSON's "kick_to_entry".)
  struct KickEntry {
    std::uint64_t n = 0;
    std::int64_t ns = 0;
    std::uint64_t over_1ms = 0;
  };
  KickEntry kick_entry[kKickPaths];
};

}  // namespace pvlock::sim
