// SPDX-License-Identifier: GPL-2.0-only
// A NativeEnv with hooks for forcing qspinlock paths in tests: a per-thread callback run at
// the start of every spin_until() (an "interrupt" arriving while the lock code spins, or a
// probe of which spin was reached) and a switch that makes every vCPU look preempted.
#pragma once

#include <atomic>
#include <functional>
#include <utility>

#include "pvlock/env/native.hpp"

namespace pvlock::testing {

struct HookEnv : NativeEnv {
  // Run on the calling thread at the start of every spin_until(), if set.
  static std::function<void(SpinSite)>& spin_hook() {
    thread_local std::function<void(SpinSite)> hook;
    return hook;
  }
  // Set as soon as any thread starts a spin at the given site.
  static std::atomic<bool>& reached(SpinSite s) {
    static std::atomic<bool> flags[static_cast<int>(SpinSite::other) + 1];
    return flags[static_cast<int>(s)];
  }
  static void reset_reached() {
    for (int s = 0; s <= static_cast<int>(SpinSite::other); ++s)
      reached(static_cast<SpinSite>(s)).store(false);
  }
  static std::atomic<bool>& all_preempted() {
    static std::atomic<bool> flag{false};
    return flag;
  }

  template <class Cond, class Check>
  static SpinResult spin_until(SpinSite site, Cond&& cond, SpinBudget& budget, std::uint32_t period,
                               Check&& check) {
    reached(site).store(true);
    if (auto& hook = spin_hook()) hook(site);
    return NativeEnv::spin_until(site, std::forward<Cond>(cond), budget, period,
                                 std::forward<Check>(check));
  }
  static bool vcpu_is_preempted(int) { return all_preempted().load(); }
};

static_assert(Environment<HookEnv>);

}  // namespace pvlock::testing
