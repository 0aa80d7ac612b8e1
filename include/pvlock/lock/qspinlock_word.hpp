// SPDX-License-Identifier: GPL-2.0-only
// The 32-bit qspinlock word and its x86 sub-word views (include/asm-generic/qspinlock_types.h,
// kernel/locking/qspinlock.h), for fewer than 16K CPUs:
//
//   bits  0- 7  locked byte   (1 = held; the PV slow path also uses 3 = _Q_SLOW_VAL)
//   bits  8-15  pending byte  (only bit 8 is used; a whole byte so it can be byte-stored)
//   bits 16-17  tail index    (which of the tail CPU's 4 per-CPU nodes: nesting level)
//   bits 18-31  tail CPU + 1  (0 = no queue)
//
// The kernel addresses the locked byte, the pending byte, the 16-bit locked+pending half and
// the 16-bit tail half separately, because a byte/half-word store or xchg is cheaper than a
// cmpxchg loop on the whole word and cannot disturb the other half. subword_view gives the
// same addresses over an Env atomic.
#pragma once

#include <cstdint>

#include "pvlock/env/environment.hpp"

namespace pvlock::qspin {

inline constexpr std::uint32_t kLockedOffset = 0;
inline constexpr std::uint32_t kLockedMask = 0xffu << kLockedOffset;
inline constexpr std::uint32_t kPendingOffset = 8;
inline constexpr std::uint32_t kPendingMask = 0xffu << kPendingOffset;
inline constexpr std::uint32_t kTailIdxOffset = 16;
inline constexpr std::uint32_t kTailIdxMask = 0x3u << kTailIdxOffset;
inline constexpr std::uint32_t kTailCpuOffset = 18;
inline constexpr std::uint32_t kTailCpuMask = 0x3fffu << kTailCpuOffset;
inline constexpr std::uint32_t kTailOffset = kTailIdxOffset;
inline constexpr std::uint32_t kTailMask = kTailIdxMask | kTailCpuMask;
inline constexpr std::uint32_t kLockedPendingMask = kLockedMask | kPendingMask;

inline constexpr std::uint32_t kLockedVal = 1u << kLockedOffset;
inline constexpr std::uint32_t kPendingVal = 1u << kPendingOffset;
// _Q_SLOW_VAL: the locked byte of a PV lock whose queue head is halted and hashed; its
// unlocker must look the head up in the hash table and kick it.
inline constexpr std::uint8_t kSlowVal = 3;

// _Q_MAX_NODES: task, softirq, hardirq and NMI context can each be inside the slow path.
inline constexpr std::uint32_t kMaxNodes = 4;
// CPU ids that fit in the tail (cpu + 1 must fit in 14 bits).
inline constexpr int kMaxTailCpus = (1 << 14) - 1;

// encode_tail(): cpu + 1 so that "cpu 0, idx 0" differs from "no tail".
constexpr std::uint32_t encode_tail(int cpu, std::uint32_t idx) {
  return (static_cast<std::uint32_t>(cpu + 1) << kTailCpuOffset) | (idx << kTailIdxOffset);
}
constexpr int tail_cpu(std::uint32_t tail) { return static_cast<int>(tail >> kTailCpuOffset) - 1; }
constexpr std::uint32_t tail_idx(std::uint32_t tail) {
  return (tail & kTailIdxMask) >> kTailIdxOffset;
}

// struct qspinlock: one u32 plus the little-endian x86 views of its bytes and halves.
template <Environment Env>
struct Word {
  using A8 = typename Env::template atomic<std::uint8_t>;
  using A16 = typename Env::template atomic<std::uint16_t>;

  A8& locked() { return subword_view<A8>(val, 0); }
  A8& pending() { return subword_view<A8>(val, 1); }
  A16& locked_pending() { return subword_view<A16>(val, 0); }
  A16& tail() { return subword_view<A16>(val, 2); }

  typename Env::template atomic<std::uint32_t> val{};
};

}  // namespace pvlock::qspin
