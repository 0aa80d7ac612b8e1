// SPDX-License-Identifier: GPL-2.0-only
// Paravirt ticket spinlock, x86 Linux 3.12-3.19 (arch/x86/include/asm/spinlock.h with
// CONFIG_PARAVIRT_SPINLOCKS, arch/x86/kernel/kvm.c kvm_lock_spinning / kvm_unlock_kick):
// the PV lock KVM guests ran before pvqspinlock (v4.2) replaced it.
//
// The word is the ticket lock's head/tail pair, but tickets advance by 2 (TICKET_LOCK_INC)
// so that bit 0 of the tail is free for TICKET_SLOWPATH_FLAG: "some waiter may be halted".
//   lock:   xadd a ticket from the tail; spin SPIN_THRESHOLD iterations for the head to reach
//           it; then enter the slow path (__ticket_lock_spinning): publish {lock, ticket} in
//           this CPU's waiting record and in the waiting_cpus mask, set the flag in the
//           tail, re-check the head (the unlock may have come meanwhile: taken_slow_pickup)
//           and halt. Woken (kicked, or by an interrupt), spin again.
//   unlock: bump the head; if the tail carries the flag, take the slow path
//           (__ticket_unlock_slowpath): if nobody else is queued, clear the flag with a
//           cmpxchg; otherwise (or if that cmpxchg loses) kick the CPU whose waiting record
//           holds this lock and the ticket now served (kvm_unlock_kick), if any.
// The flag, once set, stays until an unlock finds the lock uncontended, so every unlock of a
// busy lock pays the search; only the next ticket's waiter is kicked, so a halted waiter
// further back sleeps until its own turn (strict FIFO, as the native ticket lock). v4.0
// (d6abfdb2) moved the flag to the head and let the locker clear it; that is not modelled.
//
// The kernel halts with interrupts disabled around the slow path (local_irq_save, then
// halt() or safe_halt() as the caller had them): the Env has no interrupt state of its own,
// so the halt is pv_wait(), which the caller's interrupt state governs in the simulator.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/check.hpp"

namespace pvlock {

namespace pv_ticket {

// struct kvm_lock_waiting: the lock and ticket a CPU waits for in the slow path, on its own
// cache line (the unlocker reads every waiting CPU's record). `halted` is what pv_wait()
// sleeps on: it stays 1, so only a kick (or an interrupt) ends the halt, as halt() does.
template <Environment Env>
struct alignas(64) Waiting {
  typename Env::template atomic<std::uintptr_t> lock{};
  typename Env::template atomic<std::uint32_t> want{};
  typename Env::template atomic<std::uint8_t> halted{};
};

// waiting_cpus: a kernel-global cpumask of the CPUs in the slow path, walked by the unlocker.
inline constexpr int kMaskWords = 16;  // 1024 CPUs, NativeEnv's limit
template <Environment Env>
struct WaitingCpus {
  std::array<typename Env::template atomic<std::uint64_t>, kMaskWords> bits{};
};

}  // namespace pv_ticket

template <Environment Env>
class PvTicketLock {
 public:
  static constexpr const char* kName = "pvticket";

  static constexpr std::uint32_t kInc = 2;           // TICKET_LOCK_INC
  static constexpr std::uint32_t kSlowpathFlag = 1;  // TICKET_SLOWPATH_FLAG, in the tail
  static constexpr std::uint32_t kTailShift = 16;    // TICKET_SHIFT (u16 tickets)
  static constexpr std::uint32_t kHeadMask = 0xffff;

  // arch_spin_lock()
  void lock() {
    Env::preempt_disable();
    const std::uint32_t old = word_.fetch_add(kInc << kTailShift, std::memory_order_acquire);
    if (head_of(old) == tail_of(old)) return;
    // The flag may be set in the ticket we drew: the ticket itself is the even part.
    const std::uint32_t my = tail_of(old) & ~kSlowpathFlag;
    for (;;) {
      SpinBudget budget{Env::policies().qspinlock.spin_threshold};
      const SpinResult r = Env::spin_until(
          SpinSite::ticket_spin, [&] { return head().load(std::memory_order_acquire) == my; },
          budget, 0, [] { return false; });
      if (r == SpinResult::ready) return;
      lock_spinning(my);
    }
  }

  // arch_spin_trylock(): only when free (the flag does not count as a waiter).
  bool try_lock() {
    Env::preempt_disable();
    std::uint32_t old = word_.load(std::memory_order_relaxed);
    if (head_of(old) == (tail_of(old) & ~kSlowpathFlag) &&
        word_.compare_exchange(old, old + (kInc << kTailShift), std::memory_order_acquire))
      return true;
    Env::preempt_enable();
    return false;
  }

  // arch_spin_unlock() with paravirt_ticketlocks_enabled.
  void unlock() {
    const std::uint32_t prev = word_.load(std::memory_order_relaxed);
    PVLOCK_LOCK_CHECK(head_of(prev) != (tail_of(prev) & ~kSlowpathFlag),
                      "pvticket unlock of a lock nobody holds");
    // add_smp() on the head alone: a full barrier, and no carry into the tail.
    head().fetch_add(static_cast<std::uint16_t>(kInc), std::memory_order_seq_cst);
    // Acquire: a flag seen set brings the waiter's record and mask bit, published before it.
    if ((tail_of(word_.load(std::memory_order_acquire)) & kSlowpathFlag) != 0)
      unlock_slowpath(prev);
    Env::preempt_enable();
  }

  bool is_locked() const {
    const std::uint32_t cur = word_.load(std::memory_order_relaxed);
    return head_of(cur) != (tail_of(cur) & ~kSlowpathFlag);
  }
  // For tests and tools: the raw head/tail word.
  std::uint32_t value() const { return word_.load(std::memory_order_relaxed); }

 private:
  using Waiting = pv_ticket::Waiting<Env>;
  using WaitingCpus = pv_ticket::WaitingCpus<Env>;

  static std::uint32_t head_of(std::uint32_t w) { return w & kHeadMask; }
  static std::uint32_t tail_of(std::uint32_t w) { return w >> kTailShift; }
  typename Env::template atomic<std::uint16_t>& head() {
    return subword_view<typename Env::template atomic<std::uint16_t>>(word_, 0);
  }
  static WaitingCpus& waiting_cpus() { return Env::template global<WaitingCpus>(); }
  static auto& mask_word(int cpu) {
    return waiting_cpus().bits[static_cast<std::size_t>(cpu / 64)];
  }
  static std::uint64_t mask_bit(int cpu) { return std::uint64_t{1} << (cpu % 64); }
  std::uintptr_t key() const { return reinterpret_cast<std::uintptr_t>(this); }

  // kvm_lock_spinning(): halt until our ticket comes up and its unlocker kicks us.
  void lock_spinning(std::uint32_t want) {
    const int cpu = Env::cpu();
    Waiting& w = Env::template per_cpu<Waiting>(cpu);
    // The record may name a lock only together with the right ticket: clear the lock
    // first, so an unlocker never matches a stale ticket.
    w.lock.store(0, std::memory_order_release);
    w.want.store(want, std::memory_order_release);
    w.lock.store(key(), std::memory_order_release);
    Env::count(LockEvent::taken_slow);
    mask_word(cpu).fetch_or(mask_bit(cpu), std::memory_order_seq_cst);
    // __ticket_enter_slowpath(): from now on every unlock looks for halted waiters. Set
    // before the pickup test below, or an unlock between the two would not kick us.
    word_.fetch_or(kSlowpathFlag << kTailShift, std::memory_order_seq_cst);
    if (head().load(std::memory_order_acquire) == want) {
      Env::count(LockEvent::taken_slow_pickup);
    } else {
      w.halted.store(1, std::memory_order_relaxed);
      Env::pv_wait(&w.halted, 1);
      w.halted.store(0, std::memory_order_relaxed);
    }
    mask_word(cpu).fetch_and(~mask_bit(cpu), std::memory_order_seq_cst);
    w.lock.store(0, std::memory_order_release);
  }

  // __ticket_unlock_slowpath(): `old` is the word as it was before our head increment.
  void unlock_slowpath(std::uint32_t old) {
    // The release, applied to the copy: the head alone, wrapping within its 16 bits.
    old = (old & ~kHeadMask) | ((old + kInc) & kHeadMask);
    const std::uint32_t cleared = old & ~(kSlowpathFlag << kTailShift);
    // Uncontended (the head caught up with the tail): clear the flag, unless the word
    // changed behind our back, in which case someone is queued after all.
    std::uint32_t expected = old;
    if (head_of(cleared) != tail_of(cleared) ||
        !word_.compare_exchange(expected, cleared, std::memory_order_seq_cst))
      unlock_kick(head_of(old));
  }

  // kvm_unlock_kick(): kick the CPU waiting for `ticket` on this lock, if one is.
  void unlock_kick(std::uint32_t ticket) {
    Env::count(LockEvent::released_slow);
    const int n = Env::possible_cpus();
    for (int base = 0; base < n; base += 64) {
      std::uint64_t bits = mask_word(base).load(std::memory_order_acquire);
      while (bits != 0) {
        const int cpu = base + __builtin_ctzll(bits);
        bits &= bits - 1;
        Waiting& w = Env::template per_cpu<Waiting>(cpu);
        if (w.lock.load(std::memory_order_acquire) == key() &&
            w.want.load(std::memory_order_acquire) == ticket) {
          Env::count(LockEvent::released_slow_kicked);
          Env::pv_kick(cpu);
          return;
        }
      }
    }
  }

  // low 16 bits: head (now serving); high 16 bits: tail (next ticket | TICKET_SLOWPATH_FLAG).
  typename Env::template atomic<std::uint32_t> word_{};
};

}  // namespace pvlock
