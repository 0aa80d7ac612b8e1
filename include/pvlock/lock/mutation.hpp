// SPDX-License-Identifier: GPL-2.0-only
// Mutation checks of the PV qspinlock protocol (tests/mutation/, docs/mutations.md).
//
// A test asks "would the simulator notice if this step of the protocol were missing?" by
// compiling the lock once more with one step removed. The selector is a variable template
// keyed by the environment type: every real environment gets Mutation::none (the primary
// template below), and only a test that specialises it for an environment type of its own
// (e.g. `struct MutEnv<M> : SimEnv`) compiles a mutant. The lock code asks with
// `if constexpr (mutation<Env> == ...)`: no macro, nothing environment-specific, and the
// mutants are separate template instantiations, so several coexist in one test binary
// without touching the library's own (unmutated) instances.
#pragma once

namespace pvlock {

enum class Mutation : int {
  none = 0,
  // __pv_queued_spin_unlock_slowpath(): unhash and release, but never pv_kick() the halted
  // queue head.
  no_kick_at_unlock = 1,
  // pv_wait_head_or_lock(): halt without first hashing the lock and setting _Q_SLOW_VAL, so
  // the unlocker takes the fast path and does not know anyone is asleep.
  no_hash_before_halt = 2,
  // pv_wait_node(): read node->locked *before* publishing vcpu_halted (instead of
  // smp_store_mb(state, halted) then the re-check), opening the store-buffering window in
  // which pv_kick_node() sees "running" and the waiter then halts for good.
  halted_store_after_check = 3,
  // pv_wait_head_or_lock(): the queue head spins without setting the pending bit
  // (set_pending()), so trylock_clear_pending() can never take the lock and stealers are not
  // held off.
  no_pending_while_head_spins = 4,
};

inline constexpr int kMutationCount = 5;  // including none

template <class Env>
inline constexpr Mutation mutation = Mutation::none;

}  // namespace pvlock
