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

// The profile's symbols beyond the spin sites, once: X(name, symbol, meaning). The list
// makes the enum, the names the profile reports and the user guide's profile table
// (docs/guide/explaining-a-run.md, scripts/x-list-docs.py).
#define PVLOCK_PROFILE_SYMBOLS(X)                                                        \
  X(workload, "workload", "the workload's own computation (user mode, or unclassified)") \
  X(kernel, "kernel", "the workload's kernel work outside lock code (faults, syscalls)") \
  X(lock_ops, "lock_ops", "lock/unlock instructions outside spin loops")                 \
  X(halted, "pv_wait_halted", "HLT inside pv_wait (kvm_wait)")                           \
  X(idle, "idle", "idle loop (HLT with nothing to run)")                                 \
  X(vcpu_is_preempted, "vcpu_is_preempted", "the cost of vcpu_is_preempted() calls")     \
  X(irq, "irq", "interrupt handlers (IPIs, ticks)")                                      \
  X(schedule, "schedule", "guest context switches (__schedule)")                         \
  X(wakeup, "try_to_wake_up", "try_to_wake_up on the waker")

// Symbols: one per SpinSite first, then the non-spin ones.
enum class Sym : std::uint8_t {
  last_spin_site_ = kSpinSiteCount - 1,  // the spin sites are 0 .. kSpinSiteCount - 1
#define PVLOCK_X(name, symbol, meaning) name,
  PVLOCK_PROFILE_SYMBOLS(PVLOCK_X)
#undef PVLOCK_X
      count_,
};

inline constexpr int kSymCount = static_cast<int>(Sym::count_);

inline constexpr Sym spin_sym(SpinSite s) { return static_cast<Sym>(static_cast<int>(s)); }

inline std::string_view sym_name(Sym s) {
  const int i = static_cast<int>(s);
  if (i < kSpinSiteCount) return spin_site_symbol(static_cast<SpinSite>(i));
  switch (s) {
#define PVLOCK_X(name, symbol, meaning) \
  case Sym::name:                       \
    return symbol;
    PVLOCK_PROFILE_SYMBOLS(PVLOCK_X)
#undef PVLOCK_X
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
