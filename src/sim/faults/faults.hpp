// SPDX-License-Identifier: GPL-2.0-only
// Fault injection ([faults] in a scenario): the hand-offs of the PV protocol under a hostile
// platform. Every decision is drawn from one generator seeded from the scenario seed, in
// event order, so a faulty run is as reproducible as any other; with every probability and
// delay at 0 nothing is drawn and nothing changes.
//
//   drop_kick        a KVM_HC_KICK_CPU is lost. As in a real guest, the halted waiter then
//                    wakes only by its next interrupt (the guest tick, HZ=250: <= 4 ms) if it
//                    halted with IRQs on; with IRQs off only a kick could wake it, so it
//                    never does and the watchdog reports it. Counted: dropped_kicks and
//                    late_wakeups (+ their delay).
//   kick_delay_ns    every kick arrives this much later (a slow hypercall path).
//   spurious_wakeup  per pv_wait halt, the probability that the vCPU leaves HLT without a
//                    kick (an NMI, a spurious exit), whatever its IRQ state; the lock counts
//                    those of queued waiters as pv_spurious_wakeup.
//   ipi_delay_ns     every IPI (reschedule on wake-up, smp_call_function) arrives this late.
//   preempt_holder_after_acquire / preempt_queue_head
//                    adversarial host: with this probability the host deschedules the vCPU of
//                    a task right after it acquired a lock / right when it became the head of
//                    a qspinlock queue (a sched_yield of the vCPU thread; needs [host]).
//   preempt_at_access / preempt_at_access_ns
//                    adversarial schedule in the spirit of PCT / rr's chaos mode: after each
//                    simulated memory access of a guest task, with this probability the host
//                    deschedules its vCPU right there, between that instruction and the next
//                    (a host interrupt or preemption landing anywhere in guest code, as on a
//                    real over-committed host): a host thread takes the pCPU for
//                    preempt_at_access_ns of CPU time (default 20 us), and the vCPU then
//                    waits its turn as usual (sim/host/host_hog.cpp). Without it, a window
//                    of a few instructions (one cached load, ~2 ns) is never wide enough for
//                    another CPU to act in it; with it, any such window can open for a time
//                    slice. Loads evaluated inside a lazily simulated spin condition are not
//                    drawn on: their iterations are not executed one by one (needs [host]).
#pragma once

#include <cstdint>
#include <vector>

#include "scenario/scenario.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/rng.hpp"
#include "sim/engine/time.hpp"
#include "sim/guest/sim_atomic.hpp"

namespace pvlock::sim {

class Simulation;
struct Task;
struct Vcpu;

// Every fault counter, once: X(field, type, meaning). The list makes the struct, the run
// JSON's "faults" object (harness/run.cpp, keys = field names, in this order) and the table
// in the user guide (docs/guide/robustness.md, scripts/x-list-docs.py).
#define PVLOCK_FAULT_COUNTERS(X)                                                            \
  X(dropped_kicks, std::uint64_t, "kicks lost (`drop_kick`)")                               \
  X(delayed_kicks, std::uint64_t, "kicks delivered late (`kick_delay_ns`)")                 \
  X(delayed_ipis, std::uint64_t, "IPIs delivered late (`ipi_delay_ns`)")                    \
  /* injected; the lock's own pv_spurious_wakeup lockevent is separate */                   \
  X(spurious_wakeups, std::uint64_t, "halts ended without a kick (`spurious_wakeup`)")      \
  X(late_wakeups, std::uint64_t, "pv_wait halts ended by something else after a lost kick") \
  X(late_wakeup_ns, std::int64_t, "sum over those of wake-up time minus lost kick, ns")     \
  X(max_late_wakeup_ns, std::int64_t, "the longest of those, ns")                           \
  X(preempted_holders, std::uint64_t, "holders descheduled after acquiring")                \
  X(preempted_queue_heads, std::uint64_t, "qspinlock queue heads descheduled")              \
  X(preempted_at_access, std::uint64_t, "vCPUs descheduled after a memory access")

struct FaultCounters {
#define PVLOCK_X(field, type, meaning) type field = 0;
  PVLOCK_FAULT_COUNTERS(PVLOCK_X)
#undef PVLOCK_X
};

class Faults {
 public:
  explicit Faults(Simulation& sim) : sim_(sim) {}
  // At the start of the run, once every vCPU exists.
  void attach();
  const scenario::FaultSpec& spec() const { return spec_; }
  const FaultCounters& counters() const { return counters_; }

  // ---- Guest hooks ---------------------------------------------------------------------------
  // pv_kick(from -> to): true if the kick was dropped or deferred (the caller must not
  // deliver it now).
  bool intercept_kick(Vcpu& from, Vcpu& to);
  // An IPI: true if deferred (delivered later, `ack` included).
  bool intercept_ipi(Vcpu& from, Vcpu& to, double handler_ns, SimAtomic<std::uint32_t>* ack);
  void on_pv_halt(Vcpu& v);   // may arm a spurious wake-up
  void on_pv_woken(Vcpu& v);  // the halt ended: late wake-up accounting
  void on_acquire(Task& t);
  void on_queue_head(Task& t);
  // After a memory access of t (sim/guest/memory.cpp); the test is inline because it runs on
  // every access of every run, and draws nothing unless the fault is on.
  void on_access(Task& t) {
    if (spec_.preempt_at_access > 0) maybe_preempt_at_access(t);
  }
  // EventKind::fault
  void on_event(const Event& e);

 private:
  enum Kind : std::uint8_t { kKick = 1, kIpi, kSpurious, kPreempt };
  struct DelayedIpi {
    int from = 0, to = 0;
    double handler_ns = 0;
    SimAtomic<std::uint32_t>* ack = nullptr;
  };
  // Why the host deschedules a vCPU (trace record and counter).
  enum class Preempt : std::uint8_t { holder, head, access };
  bool draw(double p) { return p > 0 && rng_.uniform() < p; }
  void deschedule(Task& t, Preempt why);
  void maybe_preempt_at_access(Task& t);

  Simulation& sim_;
  scenario::FaultSpec spec_;
  Rng rng_;
  FaultCounters counters_;
  std::vector<Time> kick_lost_at_;       // per global vCPU: a dropped kick not yet made up
  std::vector<std::uint32_t> halt_gen_;  // per global vCPU: pv halts so far (stale events)
  std::vector<DelayedIpi> ipis_;         // FIFO (constant delay keeps it in due order)
  std::size_t ipi_head_ = 0;
};

}  // namespace pvlock::sim
