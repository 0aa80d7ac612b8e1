// SPDX-License-Identifier: GPL-2.0-only
// Ticket spinlock, as x86 Linux used before qspinlock (arch/x86 spinlock.h, 2008-2015):
// one xadd takes a ticket from `tail`, the holder's release bumps `head`. Strictly FIFO, so
// a preempted waiter stalls everyone behind it (lock-waiter preemption): the baseline that
// PV spinlocks were invented to fix.
#pragma once

#include <cstdint>
#include <limits>

#include "pvlock/env/environment.hpp"

namespace pvlock {

template <Environment Env>
class TicketLock {
 public:
  static constexpr const char* kName = "ticket";

  void lock() {
    Env::preempt_disable();
    const std::uint32_t old = word_.fetch_add(kTailOne, std::memory_order_acquire);
    const auto my = static_cast<std::uint16_t>(old >> 16);
    if (static_cast<std::uint16_t>(old) == my) return;
    SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
    Env::spin_until(
        SpinSite::ticket_spin, [&] { return head().load(std::memory_order_acquire) == my; },
        forever, 0, [] { return false; });
  }
  bool try_lock() {
    Env::preempt_disable();
    std::uint32_t cur = word_.load(std::memory_order_relaxed);
    if (static_cast<std::uint16_t>(cur) == static_cast<std::uint16_t>(cur >> 16) &&
        word_.compare_exchange(cur, cur + kTailOne, std::memory_order_acquire))
      return true;
    Env::preempt_enable();
    return false;
  }
  void unlock() {
    // Only the holder writes head: a plain increment published with release.
    auto& h = head();
    h.store(static_cast<std::uint16_t>(h.load(std::memory_order_relaxed) + 1),
            std::memory_order_release);
    Env::preempt_enable();
  }
  bool is_locked() const {
    const std::uint32_t cur = word_.load(std::memory_order_relaxed);
    return static_cast<std::uint16_t>(cur) != static_cast<std::uint16_t>(cur >> 16);
  }

 private:
  static constexpr std::uint32_t kTailOne = 1u << 16;
  typename Env::template atomic<std::uint16_t>& head() {
    return subword_view<typename Env::template atomic<std::uint16_t>>(word_, 0);
  }

  // low 16 bits: head (now serving); high 16 bits: tail (next ticket).
  typename Env::template atomic<std::uint32_t> word_{};
};

}  // namespace pvlock
