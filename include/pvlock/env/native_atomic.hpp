// SPDX-License-Identifier: GPL-2.0-only
// Native Env::atomic<T>: a standard-layout wrapper of one T operated on with the GCC/Clang
// __atomic builtins, so that (as in the kernel) a lock may address a byte or half-word of
// its word with another atomic of the narrower type (see subword_view).
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace pvlock::native {

constexpr int to_gcc(std::memory_order mo) {
  switch (mo) {
    case std::memory_order_relaxed:
      return __ATOMIC_RELAXED;
    case std::memory_order_consume:
      return __ATOMIC_CONSUME;
    case std::memory_order_acquire:
      return __ATOMIC_ACQUIRE;
    case std::memory_order_release:
      return __ATOMIC_RELEASE;
    case std::memory_order_acq_rel:
      return __ATOMIC_ACQ_REL;
    case std::memory_order_seq_cst:
      return __ATOMIC_SEQ_CST;
  }
  return __ATOMIC_SEQ_CST;
}

// The failure order of a compare-exchange may not contain a release part.
constexpr int failure_order(std::memory_order mo) {
  switch (mo) {
    case std::memory_order_release:
      return __ATOMIC_RELAXED;
    case std::memory_order_acq_rel:
      return __ATOMIC_ACQUIRE;
    default:
      return to_gcc(mo);
  }
}

template <class T>
class Atomic {
  static_assert(std::is_integral_v<T> || std::is_pointer_v<T>);

 public:
  constexpr Atomic() noexcept : v_{} {}
  constexpr explicit Atomic(T v) noexcept : v_{v} {}
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T load(std::memory_order mo = std::memory_order_seq_cst) const noexcept {
    return __atomic_load_n(&v_, to_gcc(mo));
  }
  void store(T v, std::memory_order mo = std::memory_order_seq_cst) noexcept {
    __atomic_store_n(&v_, v, to_gcc(mo));
  }
  T exchange(T v, std::memory_order mo = std::memory_order_seq_cst) noexcept {
    return __atomic_exchange_n(&v_, v, to_gcc(mo));
  }
  // Strong compare-exchange; on failure `expected` receives the current value.
  bool compare_exchange(T& expected, T desired,
                        std::memory_order mo = std::memory_order_seq_cst) noexcept {
    return __atomic_compare_exchange_n(&v_, &expected, desired, false, to_gcc(mo),
                                       failure_order(mo));
  }
  T fetch_add(T v, std::memory_order mo = std::memory_order_seq_cst) noexcept {
    return __atomic_fetch_add(&v_, v, to_gcc(mo));
  }
  T fetch_sub(T v, std::memory_order mo = std::memory_order_seq_cst) noexcept {
    return __atomic_fetch_sub(&v_, v, to_gcc(mo));
  }
  T fetch_or(T v, std::memory_order mo = std::memory_order_seq_cst) noexcept {
    return __atomic_fetch_or(&v_, v, to_gcc(mo));
  }
  T fetch_and(T v, std::memory_order mo = std::memory_order_seq_cst) noexcept {
    return __atomic_fetch_and(&v_, v, to_gcc(mo));
  }

 private:
  T v_;
};

}  // namespace pvlock::native
