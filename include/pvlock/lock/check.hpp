// SPDX-License-Identifier: GPL-2.0-only
// PVLOCK_LOCK_CHECK(cond, what): an invariant of a lock's state machine, checked in every
// build, release included: NDEBUG does not turn it off. The kernel's counterparts are the
// BUG()s and DEBUG_LOCKS_WARN_ON()s of kernel/locking; a lock whose word or queue broke an
// invariant must stop the run there, in both worlds, rather than turn into a plausible figure
// or a hang far from the cause. On failure it prints the condition, what it means and
// file:line, then aborts.
//
// A check tests only values the lock code has read anyway: an extra load would be one more
// access to a modelled cache line in the simulator and would move its results.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace pvlock {

[[noreturn, gnu::cold, gnu::noinline]] inline void lock_check_failed(const char* cond,
                                                                     const char* what,
                                                                     const char* file, int line) {
  std::fprintf(stderr, "pvlock: lock invariant violated at %s:%d: %s (%s)\n", file, line, what,
               cond);
  std::abort();
}

}  // namespace pvlock

#define PVLOCK_LOCK_CHECK(cond, what)           \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? static_cast<void>(0)                   \
       : ::pvlock::lock_check_failed(#cond, what, __FILE__, __LINE__))
