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

void Faults::deschedule(Task& t, bool head) {
  const Vcpu& v = *t.vcpu;
  sim_.watchdog().trace().add(sim_.now(),
                              head ? TraceKind::preempt_head : TraceKind::preempt_holder, v.index);
  ++(head ? counters_.preempted_queue_heads : counters_.preempted_holders);
  // From the event loop, not from inside the task's fiber: the host acts between two guest
  // instructions, at the same simulated instant.
  sim_.queue().push(sim_.now(), EventKind::fault, static_cast<std::uint32_t>(v.index), 0, kPreempt);
}

void Faults::on_acquire(Task& t) {
  if (draw(spec_.preempt_holder_after_acquire)) deschedule(t, false);
}

void Faults::on_queue_head(Task& t) {
  if (draw(spec_.preempt_queue_head)) deschedule(t, true);
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
      sim_.platform().deschedule(sim_.vcpu(static_cast<int>(e.target)));
      return;
    default:
      return;
  }
}

}  // namespace pvlock::sim
