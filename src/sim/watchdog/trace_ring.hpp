// SPDX-License-Identifier: GPL-2.0-only
// The last things the simulator did that matter for a lost wake-up (halts, wake-ups,
// kicks, injected faults), kept for the liveness diagnostic. A fixed array written in a
// circle: recording is a few stores, never an allocation, so it can stay on in every run.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/engine/time.hpp"

namespace pvlock::sim {

enum class TraceKind : std::uint8_t {
  pv_halt,          // a vCPU halts in pv_wait
  pv_wake_kick,     // ... and is woken by a kick
  pv_wake_irq,      // ... and is woken by an interrupt (tick, IPI)
  kick,             // pv_kick(other -> vcpu) sent
  kick_dropped,     // fault: that kick was lost
  kick_delayed,     // fault: that kick will arrive later
  ipi_delayed,      // fault: an IPI will arrive later
  spurious_wakeup,  // fault: a halt ended without a kick
  preempt_holder,   // fault: host deschedules a lock holder
  preempt_head,     // fault: host deschedules a new queue head
  preempt_access,   // fault: host deschedules a vCPU between two memory accesses
};

constexpr std::string_view trace_kind_name(TraceKind k) {
  switch (k) {
    case TraceKind::pv_halt:
      return "pv_wait halt";
    case TraceKind::pv_wake_kick:
      return "woken from pv_wait by a kick";
    case TraceKind::pv_wake_irq:
      return "woken from pv_wait by an interrupt";
    case TraceKind::kick:
      return "kick from";
    case TraceKind::kick_dropped:
      return "FAULT kick lost, sent by";
    case TraceKind::kick_delayed:
      return "FAULT kick delayed, sent by";
    case TraceKind::ipi_delayed:
      return "FAULT IPI delayed, sent by";
    case TraceKind::spurious_wakeup:
      return "FAULT spurious wake-up from pv_wait";
    case TraceKind::preempt_holder:
      return "FAULT host deschedules the lock holder";
    case TraceKind::preempt_head:
      return "FAULT host deschedules the new queue head";
    case TraceKind::preempt_access:
      return "FAULT host deschedules the vCPU after a memory access";
  }
  return "?";
}

struct TraceRecord {
  Time time = 0;
  TraceKind kind = TraceKind::pv_halt;
  int vcpu = -1;   // global vCPU index the record is about
  int other = -1;  // the other vCPU involved (sender of a kick/IPI), or -1
};

template <std::size_t N>
class Ring {
 public:
  void add(const TraceRecord& r) { buf_[next_++ % N] = r; }
  std::size_t size() const { return next_ < N ? static_cast<std::size_t>(next_) : N; }
  // i = 0 is the oldest record kept.
  const TraceRecord& at(std::size_t i) const { return buf_[(next_ - size() + i) % N]; }

 private:
  std::array<TraceRecord, N> buf_{};
  std::uint64_t next_ = 0;
};

// The latest records overall, and the latest few per vCPU (one busy VM must not push a
// stuck vCPU's last kick out of its own history).
class TraceRing {
 public:
  static constexpr std::size_t kSize = 64;
  static constexpr std::size_t kPerVcpu = 6;
  void resize(std::size_t vcpus) { per_vcpu_.assign(vcpus, {}); }  // at set-up only
  void add(Time t, TraceKind k, int vcpu, int other = -1) {
    const TraceRecord r{t, k, vcpu, other};
    all_.add(r);
    if (vcpu >= 0 && static_cast<std::size_t>(vcpu) < per_vcpu_.size())
      per_vcpu_[static_cast<std::size_t>(vcpu)].add(r);
  }
  const Ring<kSize>& all() const { return all_; }
  const Ring<kPerVcpu>& of(int vcpu) const { return per_vcpu_[static_cast<std::size_t>(vcpu)]; }

 private:
  Ring<kSize> all_;
  std::vector<Ring<kPerVcpu>> per_vcpu_;
};

}  // namespace pvlock::sim
