// SPDX-License-Identifier: GPL-2.0-only
// The pending resumes and per-vCPU timers of vCPUs: at most one entry per slot (a slot is a
// vCPU's resume or one of its host timers), kept in an indexed 4-ary min-heap so that
// re-arming a slot (a spinner woken before its deadline, a wait cut short by an interrupt, a
// PLE window restarted) moves its entry instead of leaving a stale event behind. Ordered by
// (time, sequence) with sequence numbers drawn from the main EventQueue, so the two queues
// interleave exactly as one queue would. A node is 16 bytes -- the time, and the sequence
// number and slot packed into one word (sequence numbers are unique, so comparing the packed
// word orders by sequence) -- so the four children of a node share one cache line and a
// sift compares adjacent memory (the queue is the simulator's hottest structure).
//
// An entry due at the current time (a vCPU switched in resumes now, a woken task runs now)
// skips the heap: it goes to a FIFO. That is exact, not an approximation: its sequence
// number is the newest, so it comes after every entry already due now and before none of
// them, and every later entry due now is newer still -- so entries due now leave in the
// order they arrived. An entry in the heap due now was set before time reached now, so it
// is older than all of the FIFO; top() still compares the two fronts. The caller keeps the
// precondition: no entry is set before `now`, and time does not pass an entry (the
// simulator never advances while an entry is due).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/time.hpp"

namespace pvlock::sim {

class ResumeQueue {
 public:
  static constexpr unsigned kSlotBits = 24;  // up to 16M slots; sequence numbers below 2^40
  static constexpr std::uint64_t kMaxSlots = std::uint64_t{1} << kSlotBits;

  void resize(std::size_t n) {
    pos_.assign(n, kAbsent);
    heap_.clear();
    heap_.reserve(n);
    // Room for every slot twice: erased entries stay in the FIFO until they reach its head,
    // and compact() makes room again (there are never more than n live entries).
    fifo_.assign(2 * n + 1, kDead);
    head_ = tail_ = 0;
  }
  bool empty() const { return heap_.empty() && head_ == tail_; }
  std::uint32_t top() const { return slot_of(front()); }
  Time top_time() const { return empty() ? kNever : time_of(front()); }
  std::uint64_t top_seq() const { return static_cast<std::uint64_t>(front()) >> kSlotBits; }

  // Schedules (or moves) the entry of `slot`; `now` is the current time (t >= now).
  void set(std::uint32_t slot, Time t, std::uint64_t seq, Time now) {
    const Node n =
        (static_cast<Node>(static_cast<std::uint64_t>(t)) << 64) | (seq << kSlotBits) | slot;
    std::uint32_t i = pos_[slot];
    if (t == now) {
      if (i != kAbsent) erase(slot);
      if (tail_ == fifo_.size()) compact();
      fifo_[tail_] = n;
      pos_[slot] = kInFifo | static_cast<std::uint32_t>(tail_);
      ++tail_;
      return;
    }
    if ((i & kInFifo) != 0 && i != kAbsent) {
      erase(slot);
      i = kAbsent;
    }
    if (i == kAbsent) {
      heap_.push_back(n);
      sift_up(static_cast<std::uint32_t>(heap_.size() - 1), n);
    } else if (less(heap_[i], n)) {
      sift_down(i, n);
    } else {
      sift_up(i, n);
    }
  }
  void erase(std::uint32_t slot) {
    const std::uint32_t i = pos_[slot];
    if (i == kAbsent) return;
    pos_[slot] = kAbsent;
    if ((i & kInFifo) != 0) {
      fifo_[i & ~kInFifo] = kDead;
      skip_dead();
      return;
    }
    const Node last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;  // it was the last node
    if (i > 0 && less(last, heap_[parent(i)]))
      sift_up(i, last);
    else
      sift_down(i, last);
  }
  bool contains(std::uint32_t slot) const { return pos_[slot] != kAbsent; }
  std::uint32_t pop() {
    if (head_ != tail_ && (heap_.empty() || fifo_[head_] < heap_.front())) {
      const std::uint32_t s = slot_of(fifo_[head_]);
      pos_[s] = kAbsent;
      ++head_;
      skip_dead();
      return s;
    }
    const std::uint32_t s = slot_of(heap_.front());
    pos_[s] = kAbsent;
    const Node last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0, last);
    return s;
  }

 private:
  // time << 64 | sequence << kSlotBits | slot: one unsigned comparison orders by (time,
  // sequence), without the branch of a two-field comparison (times are never negative).
  __extension__ using Node = unsigned __int128;
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};
  static constexpr std::uint32_t kInFifo = std::uint32_t{1} << 31;  // pos_: FIFO index
  static constexpr Node kDead = ~Node{0};  // an erased FIFO entry (no real key is all ones)
  static constexpr std::uint32_t kArity = 4;
  static std::uint32_t slot_of(Node n) {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(n) & (kMaxSlots - 1));
  }
  static Time time_of(Node n) { return static_cast<Time>(static_cast<std::uint64_t>(n >> 64)); }
  static std::uint32_t parent(std::uint32_t i) { return (i - 1) / kArity; }
  static bool less(Node a, Node b) { return a < b; }
  // The earlier of the FIFO's and the heap's fronts (not called on an empty queue).
  Node front() const {
    if (head_ == tail_) return heap_.front();
    if (heap_.empty()) return fifo_[head_];
    return fifo_[head_] < heap_.front() ? fifo_[head_] : heap_.front();
  }
  void skip_dead() {
    while (head_ != tail_ && fifo_[head_] == kDead) ++head_;
    if (head_ == tail_) head_ = tail_ = 0;
  }
  // Moves the live FIFO entries to its start (at most one per slot, fewer than its size).
  void compact() {
    std::size_t w = 0;
    for (std::size_t r = head_; r < tail_; ++r) {
      if (fifo_[r] == kDead) continue;
      fifo_[w] = fifo_[r];
      pos_[slot_of(fifo_[w])] = kInFifo | static_cast<std::uint32_t>(w);
      ++w;
    }
    for (std::size_t r = w; r < tail_; ++r) fifo_[r] = kDead;
    head_ = 0;
    tail_ = w;
  }
  void place(std::uint32_t i, const Node& n) {
    heap_[i] = n;
    pos_[slot_of(n)] = i;
  }
  // Moves the hole at i up until `n` fits there.
  void sift_up(std::uint32_t i, const Node& n) {
    while (i > 0) {
      const std::uint32_t p = parent(i);
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
      const std::uint32_t first = kArity * i + 1;
      if (first >= size) break;
      const std::uint32_t end = first + kArity < size ? first + kArity : size;
      std::uint32_t c = first;
      Node m = heap_[first];
      for (std::uint32_t k = first + 1; k < end; ++k) {
        const Node x = heap_[k];
        const bool lt = x < m;
        m = lt ? x : m;
        c = lt ? k : c;
      }
      if (!(m < n)) break;
      place(i, m);
      i = c;
    }
    place(i, n);
  }

  std::vector<Node> heap_;
  std::vector<std::uint32_t> pos_;  // heap index, kInFifo | FIFO index, or kAbsent
  std::vector<Node> fifo_;          // entries due now, oldest at head_; [head_, tail_) in use
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
};

}  // namespace pvlock::sim
