// The pending resumes of vCPUs: at most one per vCPU, kept in an indexed binary heap so that
// re-arming a vCPU (a spinner woken before its deadline, a wait cut short by an interrupt)
// moves its entry instead of leaving a stale event behind. Ordered by (time, sequence) with
// sequence numbers drawn from the main EventQueue, so the two queues interleave exactly as
// one queue would. Each heap node carries its key, so that sifting compares adjacent memory
// instead of looking the key up per vCPU (the queue is the simulator's hottest structure).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/time.hpp"

namespace pvlock::sim {

class ResumeQueue {
 public:
  void resize(std::size_t n) {
    pos_.assign(n, kAbsent);
    heap_.clear();
    heap_.reserve(n);
  }
  bool empty() const { return heap_.empty(); }
  std::uint32_t top() const { return heap_.front().v; }
  Time top_time() const { return heap_.empty() ? kNever : heap_.front().time; }
  std::uint64_t top_seq() const { return heap_.front().seq; }

  // Schedules (or moves) the resume of `v`.
  void set(std::uint32_t v, Time t, std::uint64_t seq) {
    const Node n{t, seq, v};
    const std::uint32_t i = pos_[v];
    if (i == kAbsent) {
      heap_.push_back(n);
      sift_up(static_cast<std::uint32_t>(heap_.size() - 1), n);
    } else if (less(heap_[i], n)) {
      sift_down(i, n);
    } else {
      sift_up(i, n);
    }
  }
  void erase(std::uint32_t v) {
    const std::uint32_t i = pos_[v];
    if (i == kAbsent) return;
    pos_[v] = kAbsent;
    const Node last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;  // it was the last node
    if (i > 0 && less(last, heap_[(i - 1) / 2]))
      sift_up(i, last);
    else
      sift_down(i, last);
  }
  std::uint32_t pop() {
    const std::uint32_t v = heap_.front().v;
    pos_[v] = kAbsent;
    const Node last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0, last);
    return v;
  }

 private:
  struct Node {
    Time time;
    std::uint64_t seq;
    std::uint32_t v;
  };
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};
  static bool less(const Node& a, const Node& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  void place(std::uint32_t i, const Node& n) {
    heap_[i] = n;
    pos_[n.v] = i;
  }
  // Moves the hole at i up until `n` fits there.
  void sift_up(std::uint32_t i, const Node& n) {
    while (i > 0) {
      const std::uint32_t p = (i - 1) / 2;
      if (!less(n, heap_[p])) break;
      place(i, heap_[p]);
      i = p;
    }
    place(i, n);
  }
  // Moves the hole at i down until `n` fits there.
  void sift_down(std::uint32_t i, const Node& n) {
    const auto size = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      std::uint32_t c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && less(heap_[c + 1], heap_[c])) ++c;
      if (!less(heap_[c], n)) break;
      place(i, heap_[c]);
      i = c;
    }
    place(i, n);
  }

  std::vector<Node> heap_;
  std::vector<std::uint32_t> pos_;
};

}  // namespace pvlock::sim
