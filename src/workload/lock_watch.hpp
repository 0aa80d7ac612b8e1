// SPDX-License-Identifier: GPL-2.0-only
// A workload's side of the liveness watchdog: a LockWatch for each lock it uses, and the
// calls around lock()/unlock() that keep holder, waiter and progress up to date (see
// sim/watchdog/watchdog.hpp). Allocation-free per operation.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>

#include "sim/simulation.hpp"
#include "sim/watchdog/lock_watch.hpp"
#include "sim/watchdog/lock_word.hpp"
#include "workload/guest_api.hpp"

namespace pvlock::workload {

template <class L>
sim::LockWatch make_lock_watch(const L& lock, std::string name) {
  sim::LockWatch w;
  w.name = std::move(name);
  w.lock = &lock;
  // Locks with a qspinlock word (qspinlock, pvqspinlock) print it decoded.
  if constexpr (requires(const L& l) {
                  { l.value() } -> std::convertible_to<std::uint32_t>;
                }) {
    w.describe = [](const void* p) {
      return sim::describe_qspinlock_word(static_cast<const L*>(p)->value());
    };
  }
  return w;
}

namespace api {
inline sim::Watchdog& watchdog() { return guest().sim().watchdog(); }
// Before lock(): the task now waits for `w`.
inline void lock_waiting(const sim::LockWatch& w) { watchdog().waiting(self(), w); }
// Right after lock() returned (also where a holder may be descheduled by fault injection).
inline void lock_acquired(sim::LockWatch& w) { watchdog().acquired(self(), w); }
// Right before unlock().
inline void lock_releasing(sim::LockWatch& w) { watchdog().released(self(), w); }
// One workload operation completed.
inline void progress() { watchdog().progress(self()); }
}  // namespace api

}  // namespace pvlock::workload
