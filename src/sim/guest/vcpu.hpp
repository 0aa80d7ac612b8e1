// SPDX-License-Identifier: GPL-2.0-only
// A guest CPU. On bare metal it is a physical CPU; under the hypervisor (later) it runs only
// while the host has it on a physical CPU, and its running-time clock stops otherwise, which
// is how a preempted vCPU makes no progress.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/guest/sim_atomic.hpp"

namespace pvlock::sim {

class Guest;
struct Task;

// TIF_NEED_RESCHED in the vCPU's thread_info flags word.
inline constexpr std::uint32_t kTifNeedResched = 1u << 3;

struct Vcpu {
  // Simulated memory polled by other CPUs; one line each.
  struct alignas(64) ThreadInfo {
    SimAtomic<std::uint32_t> flags{};
  };
  struct alignas(64) StealTime {  // struct kvm_steal_time (only `preempted` is modelled)
    SimAtomic<std::uint8_t> preempted{};
  };
  ThreadInfo ti;
  StealTime steal;

  int id = 0;     // vCPU number inside its guest
  int index = 0;  // global index (event target)
  int pcpu = 0;   // physical CPU it runs on now (the cache model's CPU)
  Guest* guest = nullptr;

  // Running-time clock: advances only while the vCPU is on a physical CPU.
  bool running = true;
  Time run_accum = 0;
  Time run_since = 0;
  Time runtime(Time now) const { return run_accum + (running ? now - run_since : 0); }

  std::uint32_t gen = 0;         // bumps on every (re)schedule of its resume event
  Time resume_at = kNever;       // pending resume (wall time) while running
  Time wait_target_rt = kNever;  // running-time target of the current wait

  Task* curr = nullptr;  // nullptr = idle loop
  Task* rq_head = nullptr;
  Task* rq_tail = nullptr;
  int rq_len = 0;
  Time slice_start = 0;
  // scheduler = "cfs": cfs_rq->min_vruntime, and when curr's vruntime was last brought up
  // to date. slice_start and exec_start are on Guest::clock_task() (steal left out under
  // steal_time_accounting, counted otherwise).
  Time min_vruntime = 0;
  Time exec_start = 0;

  bool halted = false;       // in HLT (idle or pv_wait)
  bool halt_for_pv = false;  // the halt is pv_wait's
  // KVM's vcpu->arch.pv.pv_unhalted: a kick that arrived while the vCPU was not halted. The
  // next HLT of any kind (pv_wait's or the idle loop's) consumes it and returns at once
  // (Platform::halt).
  bool pv_unhalted = false;
  Time halt_since = 0;
  Time idle_since = 0;
  double irq_pending_ns = 0;  // handler time owed to interrupts not yet serviced
  bool irq_waiting = false;   // interrupts arrived with IRQs off
  // The local APIC timer (TSC-deadline mode) fired while IRQs were off: its interrupt waits
  // in the IRR, and the guest programs the next deadline only from the handler, so no
  // further tick fires until the vCPU takes it.
  bool tick_pending = false;
  // Completion words of pending IPIs (smp_call_function's csd): each is decremented when
  // this vCPU runs the handlers. Reserved at guest creation; no allocation while running.
  std::vector<SimAtomic<std::uint32_t>*> irq_acks;
};

}  // namespace pvlock::sim
