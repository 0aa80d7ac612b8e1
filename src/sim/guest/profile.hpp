// SPDX-License-Identifier: GPL-2.0-only
// A simulated `perf` profile: CPU time per kernel symbol, per VM. Spin time is attributed to
// the symbol of the kernel loop it models (spin_site_symbol), so later analyses can ask for
// the share of osq_lock or mutex_spin_on_owner the way the seeds' perf profiles report them.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "pvlock/env/environment.hpp"

namespace pvlock::sim {

inline constexpr int kSpinSiteCount = static_cast<int>(SpinSite::other) + 1;

// Symbols: one per SpinSite first, then the non-spin ones.
enum class Sym : std::uint8_t {
  workload = kSpinSiteCount,  // the workload's own computation (user mode, or unclassified)
  kernel,                     // the workload's kernel work outside lock code (faults, syscalls)
  lock_ops,                   // lock/unlock instructions outside spin loops
  halted,                     // HLT inside pv_wait (kvm_wait)
  idle,                       // idle loop (HLT with nothing to run)
  vcpu_is_preempted,          // the cost of vcpu_is_preempted() calls (seed 004)
  irq,                        // interrupt handlers (IPIs, ticks)
  schedule,                   // guest context switches (__schedule)
  wakeup,                     // try_to_wake_up on the waker
  count_,
};

inline constexpr int kSymCount = static_cast<int>(Sym::count_);

inline constexpr Sym spin_sym(SpinSite s) { return static_cast<Sym>(static_cast<int>(s)); }

inline std::string_view sym_name(Sym s) {
  const int i = static_cast<int>(s);
  if (i < kSpinSiteCount) return spin_site_symbol(static_cast<SpinSite>(i));
  switch (s) {
    case Sym::workload:
      return "workload";
    case Sym::kernel:
      return "kernel";
    case Sym::lock_ops:
      return "lock_ops";
    case Sym::halted:
      return "pv_wait_halted";
    case Sym::idle:
      return "idle";
    case Sym::vcpu_is_preempted:
      return "vcpu_is_preempted";
    case Sym::irq:
      return "irq";
    case Sym::schedule:
      return "schedule";
    case Sym::wakeup:
      return "try_to_wake_up";
    default:
      return "?";
  }
}

struct Profile {
  std::array<double, kSymCount> ns{};
  void add(Sym s, double v) { ns[static_cast<std::size_t>(s)] += v; }
  void reset() { ns = {}; }
};

}  // namespace pvlock::sim
