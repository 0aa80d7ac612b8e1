// SPDX-License-Identifier: GPL-2.0-only
// How many events a run dispatched, by kind: the denominator of every speed figure
// (events per second), so it counts every event the loop hands to a handler -- vCPU
// resumes, guest ticks, host events by their own kind -- and, apart, the stale ones that
// reach the loop but do nothing (a resume of a vCPU the host has descheduled, a host timer
// superseded by a later one of its kind). Counting is one increment per event.
#pragma once

#include <array>
#include <cstdint>

#include "sim/engine/event_queue.hpp"

namespace pvlock::sim {

inline constexpr std::size_t kEventKinds = 9;       // EventKind's members
inline constexpr std::size_t kHostEventKinds = 16;  // a platform's event sub-kinds (Event::arg)

struct EventCounts {
  std::array<std::uint64_t, kEventKinds> by_kind{};
  // EventKind::host events, by their arg (the platform names them).
  std::array<std::uint64_t, kHostEventKinds> host_by_arg{};
  std::uint64_t stale_resumes = 0;  // resumes of a descheduled vCPU, or cancelled queue entries
  std::uint64_t stale_host = 0;     // host timers superseded before they came due

  void add(EventKind k) { ++by_kind[static_cast<std::size_t>(k)]; }
  void add_host(std::uint8_t arg) { ++host_by_arg[arg < kHostEventKinds ? arg : 0]; }
  std::uint64_t dispatched() const {
    std::uint64_t n = 0;
    for (const std::uint64_t c : by_kind) n += c;
    return n;
  }
  std::uint64_t stale() const { return stale_resumes + stale_host; }
};

inline const char* event_kind_name(EventKind k) {
  switch (k) {
    case EventKind::vcpu_resume:
      return "vcpu_resume";
    case EventKind::vcpu_tick:
      return "vcpu_tick";
    case EventKind::timer:
      return "timer";
    case EventKind::warmup_end:
      return "warmup_end";
    case EventKind::run_end:
      return "run_end";
    case EventKind::host:
      return "host";
    case EventKind::watchdog:
      return "watchdog";
    case EventKind::fault:
      return "fault";
    case EventKind::sample:
      return "sample";
  }
  return "?";
}

}  // namespace pvlock::sim
