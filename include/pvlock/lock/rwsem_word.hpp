// SPDX-License-Identifier: GPL-2.0-only
// The two words of struct rw_semaphore (kernel/locking/rwsem.c) and the constants that
// govern its spinning and hand-off, kept apart from the algorithm in rwsem.hpp.
//
// count:  bit 0 WRITER_LOCKED, bit 1 WAITERS, bit 2 HANDOFF, bits 8.. the number of readers
//         (each holds READER_BIAS), top bit READ_FAIL (reader-count overflow guard).
// owner:  the writer's task; or, with READER_OWNED, the last reader to take it (readers are
//         not tracked individually, so this is a hint); NONSPINNABLE set by a writer that
//         timed out spinning on readers, so that the next writers go straight to sleep
//         (v5.3-v5.10: RD_NONSPINNABLE and WR_NONSPINNABLE, one for each side).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace pvlock::rwsem {

inline constexpr std::uintptr_t kWriterLocked = 1u << 0;  // RWSEM_WRITER_LOCKED
inline constexpr std::uintptr_t kFlagWaiters = 1u << 1;   // RWSEM_FLAG_WAITERS
inline constexpr std::uintptr_t kFlagHandoff = 1u << 2;   // RWSEM_FLAG_HANDOFF
inline constexpr std::uintptr_t kFlagReadFail = std::uintptr_t{1}
                                                << (sizeof(std::uintptr_t) * 8 - 1);
inline constexpr int kReaderShift = 8;
inline constexpr std::uintptr_t kReaderBias = std::uintptr_t{1} << kReaderShift;
inline constexpr std::uintptr_t kReaderMask = ~(kReaderBias - 1);  // includes READ_FAIL
inline constexpr std::uintptr_t kWriterMask = kWriterLocked;
inline constexpr std::uintptr_t kLockMask = kWriterMask | kReaderMask;
inline constexpr std::uintptr_t kReadFailedMask =
    kWriterMask | kFlagWaiters | kFlagHandoff | kFlagReadFail;

inline constexpr std::uintptr_t kReaderOwned = 1u << 0;   // RWSEM_READER_OWNED
inline constexpr std::uintptr_t kNonspinnable = 1u << 1;  // RWSEM_NONSPINNABLE
// v5.3-v5.10 (reader spinning): the same bit is RWSEM_RD_NONSPINNABLE, readers may not
// spin, and a second one, RWSEM_WR_NONSPINNABLE, stops writers; a writer that times out on
// readers sets both.
inline constexpr std::uintptr_t kRdNonspinnable = kNonspinnable;
inline constexpr std::uintptr_t kWrNonspinnable = 1u << 2;
inline constexpr std::uintptr_t kOwnerFlagsMask = kReaderOwned | kNonspinnable | kWrNonspinnable;

// RWSEM_WAIT_TIMEOUT = DIV_ROUND_UP(HZ, 250) jiffies: 4 ms at HZ=250 and at HZ=1000. A first
// waiter queued longer than this may claim HANDOFF.
inline constexpr std::int64_t kWaitTimeoutNs = 4'000'000;

// MAX_READERS_WAKEUP: readers woken by one rwsem_mark_wake() call.
inline constexpr std::size_t kMaxReadersWakeup = 0x100;

// rwsem_rspin_threshold(): how long a writer may spin on a reader-owned rwsem,
// (10 + readers / 2) us, readers capped at 30 (so at most 25 us).
constexpr std::int64_t reader_spin_limit_ns(std::uint64_t readers) {
  return static_cast<std::int64_t>((20 + std::min<std::uint64_t>(readers, 30)) * 1000 / 2);
}
// The clock is read once every 16 spins (the `!(++loop & 0xf)` test), to keep sched_clock()
// out of the latency between the lock going free and the spinner's trylock.
inline constexpr std::uint32_t kReaderSpinClockPeriod = 16;

// No lock bit and no HANDOFF: a writer outside the queue may take it (the test of
// rwsem_try_write_lock_unqueued()).
constexpr bool free_for_writer(std::uintptr_t count) {
  return (count & (kLockMask | kFlagHandoff)) == 0;
}

// enum owner_state of rwsem_spin_on_owner(): bit values so that SPINNABLE is a mask.
enum class OwnerState : std::uint8_t {
  null = 1 << 0,          // no owner recorded
  writer = 1 << 1,        // a writer (whose task we can watch)
  reader = 1 << 2,        // readers (time-limited spinning)
  nonspinnable = 1 << 3,  // stop: owner not running, NONSPINNABLE set, or need_resched
};
constexpr bool spinnable(OwnerState s) { return s != OwnerState::nonspinnable; }

// rwsem_owner_state(); `nonspinnable` is the bit that stops this spinner (v5.3-v5.10: the
// reader's or the writer's).
constexpr OwnerState owner_state(std::uintptr_t owner_word,
                                 std::uintptr_t nonspinnable = kNonspinnable) {
  if ((owner_word & nonspinnable) != 0) return OwnerState::nonspinnable;
  if ((owner_word & kReaderOwned) != 0) return OwnerState::reader;
  return (owner_word & ~kOwnerFlagsMask) != 0 ? OwnerState::writer : OwnerState::null;
}

}  // namespace pvlock::rwsem
