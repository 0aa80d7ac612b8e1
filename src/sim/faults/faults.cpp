// SPDX-License-Identifier: GPL-2.0-only
#include "sim/faults/faults.hpp"

#include "sim/guest/guest.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {

namespace {
constexpr std::uint64_t kFaultSeedDomain = 0xFA17;
// A spurious wake-up comes within this long after the halt (uniformly): late enough to be a
// real halt, early enough to matter before the kick.
constexpr double kSpuriousWithinNs = 20'000;
}  // namespace

void Faults::attach() {
  spec_ = sim_.scenario().faults;
  rng_.reseed(derive_seed(sim_.seed(), kFaultSeedDomain, 0));
  const auto n = static_cast<std::size_t>(sim_.vcpu_count());
  kick_lost_at_.assign(n, kNever);
  halt_gen_.assign(n, 0);
  ipis_.clear();
  ipis_.reserve(spec_.ipi_delay_ns > 0 ? 1024 : 0);
  ipi_head_ = 0;
}

bool Faults::intercept_kick(Vcpu& from, Vcpu& to) {
  const Time now = sim_.now();
  if (draw(spec_.drop_kick)) {
    ++counters_.dropped_kicks;
    auto& lost = kick_lost_at_[static_cast<std::size_t>(to.index)];
    if (lost == kNever) lost = now;
    sim_.watchdog().trace().add(now, TraceKind::kick_dropped, to.index, from.index);
    return true;
  }
  if (spec_.kick_delay_ns <= 0) return false;
  ++counters_.delayed_kicks;
  sim_.watchdog().trace().add(now, TraceKind::kick_delayed, to.index, from.index);
  sim_.queue().push(now + spec_.kick_delay_ns, EventKind::fault,
                    static_cast<std::uint32_t>(to.index), static_cast<std::uint32_t>(from.index),
                    kKick);
  return true;
}

bool Faults::intercept_ipi(Vcpu& from, Vcpu& to, double handler_ns, SimAtomic<std::uint32_t>* ack) {
  if (spec_.ipi_delay_ns <= 0) return false;
  const Time now = sim_.now();
  ++counters_.delayed_ipis;
  sim_.watchdog().trace().add(now, TraceKind::ipi_delayed, to.index, from.index);
  // Compact the FIFO once it is drained, so it does not grow over a long run.
  if (ipi_head_ == ipis_.size()) {
    ipis_.clear();
    ipi_head_ = 0;
  }
  ipis_.push_back(DelayedIpi{from.index, to.index, handler_ns, ack});
  sim_.queue().push(now + spec_.ipi_delay_ns, EventKind::fault, 0, 0, kIpi);
  return true;
}

void Faults::on_pv_halt(Vcpu& v) {
  const auto i = static_cast<std::size_t>(v.index);
  ++halt_gen_[i];
  if (!draw(spec_.spurious_wakeup)) return;
  const auto delay = static_cast<Time>(1 + rng_.uniform() * kSpuriousWithinNs);
  sim_.queue().push(sim_.now() + delay, EventKind::fault, static_cast<std::uint32_t>(v.index),
                    halt_gen_[i], kSpurious);
}

void Faults::on_pv_woken(Vcpu& v) {
  const auto i = static_cast<std::size_t>(v.index);
  ++halt_gen_[i];
  Time& lost = kick_lost_at_[i];
  if (lost == kNever) return;
  const Time late = sim_.now() - lost;
  lost = kNever;
  ++counters_.late_wakeups;
  counters_.late_wakeup_ns += late;
  if (late > counters_.max_late_wakeup_ns) counters_.max_late_wakeup_ns = late;
}

void Faults::deschedule(Task& t, Preempt why) {
  const Vcpu& v = *t.vcpu;
  TraceKind kind = TraceKind::preempt_holder;
  switch (why) {
    case Preempt::holder:
      ++counters_.preempted_holders;
      break;
    case Preempt::head:
      kind = TraceKind::preempt_head;
      ++counters_.preempted_queue_heads;
      break;
    case Preempt::access:
      kind = TraceKind::preempt_access;
      ++counters_.preempted_at_access;
      break;
  }
  sim_.watchdog().trace().add(sim_.now(), kind, v.index);
  const std::uint32_t timed = why == Preempt::access ? 1 : 0;  // gen: which duration
  // From the event loop, not from inside the task's fiber: the host acts between two guest
  // instructions, at the same simulated instant.
  sim_.queue().push(sim_.now(), EventKind::fault, static_cast<std::uint32_t>(v.index), timed,
                    kPreempt);
}

void Faults::on_acquire(Task& t) {
  if (draw(spec_.preempt_holder_after_acquire)) deschedule(t, Preempt::holder);
}

void Faults::on_queue_head(Task& t) {
  if (draw(spec_.preempt_queue_head)) deschedule(t, Preempt::head);
}

void Faults::maybe_preempt_at_access(Task& t) {
  // The access itself is done (a load has its value, a store is visible); the deschedule
  // event at this instant is handled before the task's next access, whose sync() yields to
  // the event loop. So the host acts between this instruction and the next one.
  if (draw(spec_.preempt_at_access)) deschedule(t, Preempt::access);
}

void Faults::on_event(const Event& e) {
  switch (e.arg) {
    case kKick: {
      Vcpu& to = sim_.vcpu(static_cast<int>(e.target));
      Vcpu& from = sim_.vcpu(static_cast<int>(e.gen));
      (void)sim_.platform().kick(from, to);  // the sender paid when it sent it
      return;
    }
    case kIpi: {
      const DelayedIpi d = ipis_[ipi_head_++];
      Vcpu& to = sim_.vcpu(d.to);
      if (d.ack != nullptr) to.irq_acks.push_back(d.ack);
      (void)sim_.platform().send_ipi(sim_.vcpu(d.from), to, d.handler_ns);
      return;
    }
    case kSpurious: {
      Vcpu& v = sim_.vcpu(static_cast<int>(e.target));
      if (e.gen != halt_gen_[static_cast<std::size_t>(v.index)] || !v.halted || !v.halt_for_pv)
        return;  // that halt is over
      ++counters_.spurious_wakeups;
      sim_.watchdog().trace().add(sim_.now(), TraceKind::spurious_wakeup, v.index);
      v.halted = false;
      if (v.running) sim_.schedule_resume(v, sim_.now());
      sim_.platform().halt_ended(v);
      return;
    }
    case kPreempt:
      // The holder / queue-head faults are a sched_yield of the vCPU thread; the access fault
      // takes the pCPU away for preempt_at_access_ns whatever else is runnable there.
      sim_.platform().deschedule(sim_.vcpu(static_cast<int>(e.target)),
                                 e.gen != 0 ? spec_.preempt_at_access_ns : 0);
      return;
    default:
      return;
  }
}

}  // namespace pvlock::sim
