// SPDX-License-Identifier: GPL-2.0-only
// The cache-line cost model.
//
// Every simulated memory word belongs to a 64-byte line, identified by its real address >> 6
// (only line identity matters; nothing depends on address values). A line is either owned
// (Modified) by one CPU or shared by a set of CPUs:
//   - a load that hits costs l1_hit; a miss pulls the line from its owner (or last writer)
//     at the SMT / same-socket / cross-socket transfer cost, and the owner drops to Shared;
//   - a store or RMW needs the line exclusive: if it does not own it, it pays a transfer from
//     the owner or from the farthest sharer it must invalidate;
//   - stores and RMWs on one line serialise: the line is busy until the previous write has
//     completed, so N CPUs hammering one line pay N transfers. This is the mechanism behind
//     the test-and-set collapse of seed 002.
// When an access takes effect is memory.cpp's part: a write that fetches its line changes
// the value when the line arrives, and a load that misses returns the line as it is when its
// data arrives, behind any write already in flight on it (the line's home orders them).
// Lines also carry an intrusive list of watchers: spinners sleeping until the line changes.
#pragma once

#include <cstdint>
#include <vector>

#include "scenario/scenario.hpp"
#include "sim/engine/time.hpp"
#include "sim/machine/cpu_set.hpp"
#include "sim/machine/topology.hpp"

namespace pvlock::sim {

inline constexpr int kLineShift = 6;

inline std::uint64_t line_key(const void* addr) {
  return reinterpret_cast<std::uintptr_t>(addr) >> kLineShift;
}

// One spinner's registration on one line; owned by the spinner (no allocation).
struct WatchNode {
  WatchNode* next = nullptr;
  WatchNode** pprev = nullptr;
  void* waiter = nullptr;  // the sleeping task
  bool linked() const { return pprev != nullptr; }
};

struct Line {
  std::uint64_t key = kEmpty;
  Time busy_until = 0;
  std::int16_t owner = -1;        // CPU holding it Modified, or -1
  std::int16_t last_writer = -1;  // where the data comes from when only sharers remain
  std::uint32_t version = 0;      // bumped on every change of the line's contents
  CpuSet sharers;
  WatchNode* watchers = nullptr;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
};

class Coherence {
 public:
  Coherence(const Topology& topo, const scenario::Costs& costs);

  // The line holding `key`, created on first touch. The reference is valid until the next
  // lookup of a new line (the table may grow); do not keep it across a yield.
  Line& line(std::uint64_t key);
  Line* find(std::uint64_t key);

  // Cost of a load by `cpu`; updates the line's state.
  double load(Line& l, int cpu);
  // Cost of a store (rmw = false) or atomic RMW (rmw = true) by `cpu`; updates the state.
  double write(Line& l, int cpu, bool rmw);
  double transfer(int from, int to) const;

  static void watch(Line& l, WatchNode& n);
  static void unwatch(WatchNode& n);
  // Detaches every watcher of `l` and calls wake(waiter) for each.
  template <class F>
  static void notify(Line& l, F&& wake) {
    WatchNode* head = l.watchers;
    if (head == nullptr) return;
    l.watchers = nullptr;
    head->pprev = &head;
    while (head != nullptr) {
      WatchNode* n = head;
      unwatch(*n);
      wake(n->waiter);
    }
  }

  std::size_t lines() const { return used_; }
  double l1_hit() const { return l1_hit_; }
  double atomic_local() const { return atomic_local_; }

 private:
  void grow();
  std::size_t slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  const Topology& topo_;
  double l1_hit_, atomic_local_, xfer_smt_, xfer_socket_, xfer_remote_;
  std::vector<Line> table_;
  std::size_t used_ = 0;
  int shift_ = 0;
};

}  // namespace pvlock::sim
