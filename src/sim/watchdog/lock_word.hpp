// SPDX-License-Identifier: GPL-2.0-only
// A qspinlock word, decoded for the liveness diagnostic (layout in qspinlock_word.hpp).
#pragma once

#include <fmt/core.h>

#include <cstdint>
#include <string>

#include "pvlock/lock/qspinlock_word.hpp"

namespace pvlock::sim {

inline std::string describe_qspinlock_word(std::uint32_t val) {
  using namespace qspin;
  const std::uint32_t locked = val & kLockedMask;
  const char* what = locked == 0            ? "free"
                     : locked == kLockedVal ? "held"
                     : locked == kSlowVal   ? "held, _Q_SLOW_VAL: the unlocker must kick"
                                            : "corrupt";
  std::string s = fmt::format("0x{:08x}: locked={} ({}), pending={}", val, locked, what,
                              (val & kPendingMask) >> kPendingOffset);
  const std::uint32_t tail = val & kTailMask;
  if (tail == 0)
    s += ", no queue";
  else
    s += fmt::format(", queue tail = vCPU {} node {}", tail_cpu(tail), tail_idx(tail));
  return s;
}

}  // namespace pvlock::sim
