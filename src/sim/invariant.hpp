// SPDX-License-Identifier: GPL-2.0-only
// PVLOCK_INVARIANT(cond, what): a state-machine invariant of the simulator, checked in every
// build, release included -- NDEBUG does not turn it off, and there is no switch that does.
// A simulation whose assertions are off proves nothing (TigerBeetle's simulator refuses to
// run without them): a broken run queue or a reordered event would otherwise turn into a
// plausible number in a results table. On failure it prints the condition, what it means,
// file:line and the simulated time, then aborts.
//
// Checks stay O(1) or O(run-queue length) at sites that already pay that much; the hot
// paths keep their cost.
#pragma once

namespace pvlock::sim {

[[noreturn]] void invariant_failed(const char* cond, const char* what, const char* file, int line);

}  // namespace pvlock::sim

#define PVLOCK_INVARIANT(cond, what)            \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? static_cast<void>(0)                   \
       : ::pvlock::sim::invariant_failed(#cond, what, __FILE__, __LINE__))
