// SPDX-License-Identifier: GPL-2.0-only
// The simulator's single event queue: a binary min-heap of small POD events ordered by
// (time, sequence). The sequence number makes ties deterministic (first scheduled, first
// run). Storage is reserved up front and events are never individually allocated; a
// cancelled event is not removed but left to go stale (its target's generation moved on).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/time.hpp"

namespace pvlock::sim {

enum class EventKind : std::uint8_t {
  vcpu_resume,  // a vCPU's current context continues (wait elapsed, woken, kicked...)
  vcpu_tick,    // the guest scheduler tick of one vCPU
  timer,        // a guest task's hrtimer (target = vCPU index, gen = task id)
  warmup_end,   // start of the measured window
  run_end,      // end of the run
  host,         // reserved for the hypervisor layer (target/arg are its own)
  watchdog,     // the liveness watchdog's periodic check (sim/watchdog/)
  fault,        // an injected fault comes due (sim/faults/; target/gen/arg are its own)
  sample,       // the periodic sampler's next interval boundary (harness/series.hpp)
};

struct Event {
  Time time;
  std::uint64_t seq;
  std::uint32_t target;  // vCPU index, timer slot, ...
  std::uint32_t gen;     // generation of the target when scheduled (stale if it moved on)
  EventKind kind;
  std::uint8_t arg = 0;
};

class EventQueue {
 public:
  explicit EventQueue(std::size_t reserve = 4096) { heap_.reserve(reserve); }

  void push(Time t, EventKind kind, std::uint32_t target, std::uint32_t gen, std::uint8_t arg = 0) {
    heap_.push_back(Event{t, seq_++, target, gen, kind, arg});
    sift_up(heap_.size() - 1);
  }
  // A sequence number for an event kept in another queue (see ResumeQueue).
  std::uint64_t take_seq() { return seq_++; }
  std::uint64_t top_seq() const { return heap_.front().seq; }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  // Earliest event time, or kNever.
  Time next_time() const { return heap_.empty() ? kNever : heap_.front().time; }
  Event pop() {
    Event e = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return e;
  }

 private:
  static bool less(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      std::size_t p = (i - 1) / 2;
      if (!less(e, heap_[p])) break;
      heap_[i] = heap_[p];
      i = p;
    }
    heap_[i] = e;
  }
  void sift_down(std::size_t i) {
    const std::size_t n = heap_.size();
    Event e = heap_[i];
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && less(heap_[c + 1], heap_[c])) ++c;
      if (!less(heap_[c], e)) break;
      heap_[i] = heap_[c];
      i = c;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace pvlock::sim
