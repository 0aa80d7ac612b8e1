// The pending resumes of vCPUs: at most one per vCPU, kept in an indexed binary heap so that
// re-arming a vCPU (a spinner woken before its deadline, a wait cut short by an interrupt)
// moves its entry instead of leaving a stale event behind. Ordered by (time, sequence) with
// sequence numbers drawn from the main EventQueue, so the two queues interleave exactly as
// one queue would.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/time.hpp"

namespace pvlock::sim {

class ResumeQueue {
 public:
  void resize(std::size_t n) {
    pos_.assign(n, kAbsent);
    time_.assign(n, kNever);
    seq_.assign(n, 0);
    heap_.clear();
    heap_.reserve(n);
  }
  bool empty() const { return heap_.empty(); }
  std::uint32_t top() const { return heap_.front(); }
  Time top_time() const { return heap_.empty() ? kNever : time_[heap_.front()]; }
  std::uint64_t top_seq() const { return seq_[heap_.front()]; }

  // Schedules (or moves) the resume of `v`.
  void set(std::uint32_t v, Time t, std::uint64_t seq) {
    const bool later = pos_[v] != kAbsent && less_key(time_[v], seq_[v], t, seq);
    time_[v] = t;
    seq_[v] = seq;
    if (pos_[v] == kAbsent) {
      pos_[v] = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back(v);
      sift_up(pos_[v]);
    } else if (later) {
      sift_down(pos_[v]);
    } else {
      sift_up(pos_[v]);
    }
  }
  void erase(std::uint32_t v) {
    const std::uint32_t i = pos_[v];
    if (i == kAbsent) return;
    pos_[v] = kAbsent;
    const std::uint32_t last = heap_.back();
    heap_.pop_back();
    if (last == v) return;
    heap_[i] = last;
    pos_[last] = i;
    sift_down(i);
    sift_up(pos_[last]);
  }
  std::uint32_t pop() {
    const std::uint32_t v = heap_.front();
    erase(v);
    return v;
  }

 private:
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};
  static bool less_key(Time ta, std::uint64_t sa, Time tb, std::uint64_t sb) {
    return ta < tb || (ta == tb && sa < sb);
  }
  bool less(std::uint32_t a, std::uint32_t b) const {
    return less_key(time_[a], seq_[a], time_[b], seq_[b]);
  }
  void place(std::uint32_t i, std::uint32_t v) {
    heap_[i] = v;
    pos_[v] = i;
  }
  void sift_up(std::uint32_t i) {
    const std::uint32_t v = heap_[i];
    while (i > 0) {
      const std::uint32_t p = (i - 1) / 2;
      if (!less(v, heap_[p])) break;
      place(i, heap_[p]);
      i = p;
    }
    place(i, v);
  }
  void sift_down(std::uint32_t i) {
    const auto n = static_cast<std::uint32_t>(heap_.size());
    const std::uint32_t v = heap_[i];
    for (;;) {
      std::uint32_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && less(heap_[c + 1], heap_[c])) ++c;
      if (!less(heap_[c], v)) break;
      place(i, heap_[c]);
      i = c;
    }
    place(i, v);
  }

  std::vector<std::uint32_t> heap_;
  std::vector<std::uint32_t> pos_;
  std::vector<Time> time_;
  std::vector<std::uint64_t> seq_;
};

}  // namespace pvlock::sim
