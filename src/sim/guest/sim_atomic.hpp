// SPDX-License-Identifier: GPL-2.0-only
// SimEnv::atomic<T>: a plain T (standard layout, so subword_view works as on x86) whose every
// operation goes through the simulated CPU executing it: pending local time is waited out,
// the cache-line model charges the access, writes serialise on the line and wake spinners
// watching it. Outside a simulated task (set-up, reports) operations are plain.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace pvlock::sim::mem {
// Implemented in guest/memory.cpp.
void load(const void* addr);
void write(const void* addr, bool rmw);
void written(const void* addr);  // the value changed: wake watchers of the line
}  // namespace pvlock::sim::mem

namespace pvlock::sim {

template <class T>
class SimAtomic {
  static_assert(std::is_integral_v<T> || std::is_pointer_v<T>);

 public:
  constexpr SimAtomic() noexcept : v_{} {}
  constexpr explicit SimAtomic(T v) noexcept : v_{v} {}
  SimAtomic(const SimAtomic&) = delete;
  SimAtomic& operator=(const SimAtomic&) = delete;

  T load(std::memory_order = std::memory_order_seq_cst) const {
    mem::load(&v_);
    return v_;
  }
  void store(T v, std::memory_order = std::memory_order_seq_cst) {
    mem::write(&v_, false);
    set(v);
  }
  T exchange(T v, std::memory_order = std::memory_order_seq_cst) {
    mem::write(&v_, true);
    const T old = v_;
    set(v);
    return old;
  }
  bool compare_exchange(T& expected, T desired, std::memory_order = std::memory_order_seq_cst) {
    // x86 lock cmpxchg takes the line exclusive whether or not it succeeds.
    mem::write(&v_, true);
    if (v_ == expected) {
      set(desired);
      return true;
    }
    expected = v_;
    return false;
  }
  T fetch_add(T v, std::memory_order = std::memory_order_seq_cst) {
    return rmw([v](T x) { return static_cast<T>(x + v); });
  }
  T fetch_sub(T v, std::memory_order = std::memory_order_seq_cst) {
    return rmw([v](T x) { return static_cast<T>(x - v); });
  }
  T fetch_or(T v, std::memory_order = std::memory_order_seq_cst) {
    return rmw([v](T x) { return static_cast<T>(x | v); });
  }
  T fetch_and(T v, std::memory_order = std::memory_order_seq_cst) {
    return rmw([v](T x) { return static_cast<T>(x & v); });
  }

  // Unsimulated access (set-up, reports, the simulator's own bookkeeping).
  T raw() const { return v_; }
  // A write by "hardware" (host, interrupt logic): no cost, but spinners are woken.
  void hw_store(T v) { set(v); }

 private:
  template <class F>
  T rmw(F f) {
    mem::write(&v_, true);
    const T old = v_;
    set(f(old));
    return old;
  }
  void set(T v) {
    if (v_ == v) return;
    v_ = v;
    mem::written(&v_);
  }
  T v_;
};

}  // namespace pvlock::sim
