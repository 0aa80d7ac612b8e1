// SPDX-License-Identifier: GPL-2.0-only
// The torture test body (kernel/locking/locktorture.c in spirit), written once over the
// Environment and run by both worlds: native/torture.cpp on real threads, workload/torture.cpp
// inside the simulator. Writers loop acquire -> check the owner slot and the readers count ->
// read-modify-write a protected counter across the hold (a second holder makes an update
// vanish) -> release, with an occasional long hold; readers (rw locks) check that no writer is
// beside them.
//
// What differs between the worlds is the World `w`, one per task:
//   w.running()             false once the run should stop (the simulator ends its tasks)
//   w.now()                 the task's clock, ns
//   w.below(n)              a uniform draw in [0, n) from the task's own generator
//   w.hold(ns) / w.pause(n) spend ns in the critical section / n PAUSEs outside it
//   w.hold_ns()             a draw of the ordinary hold; w.long_hold_ns(), w.long_one_in()
//   w.violation()           count one exclusion violation
//   w.lock_begin(excl) ... w.unlock_end(excl)   bracket the lock calls (profile symbols,
//                           the liveness watchdog, IRQs off, progress in the simulator)
#pragma once

#include <algorithm>
#include <cstdint>

#include "torture/result.hpp"

namespace pvlock::torture {

// The lock and the data it protects, each on its own cache line.
template <class Env, class L>
struct alignas(64) Arena {
  alignas(64) L lock;
  alignas(64) typename Env::template atomic<std::uint32_t> owner{};  // writer id + 1, 0 = none
  alignas(64) typename Env::template atomic<std::uint32_t> readers{};
  alignas(64) typename Env::template atomic<std::uint64_t> counter{};
};

// Exclusion checks are relaxed atomics so that a broken lock shows up as a counted
// violation, not as undefined behaviour (ThreadSanitizer stays quiet about the negative
// controls); the lock's own ordering is what is being tested.
inline constexpr auto kRelaxed = std::memory_order_relaxed;

// Outside work: a short, random pause so that acquisitions do not phase-lock.
inline constexpr std::uint64_t kOutsidePauses = 32;

template <class Env, class L, class World>
void writer_loop(Arena<Env, L>& a, std::uint32_t me, ThreadStats& st, std::int64_t& last_acquire,
                 World& w) {
  while (w.running()) {
    const std::int64_t t0 = w.now();
    w.lock_begin(true);
    a.lock.lock();
    w.lock_end(true);
    st.max_wait_ns = std::max(st.max_wait_ns, w.now() - t0);
    if (a.owner.exchange(me, kRelaxed) != 0) w.violation();
    if (a.readers.load(kRelaxed) != 0) w.violation();
    const std::uint64_t c = a.counter.load(kRelaxed);
    w.hold(w.below(w.long_one_in()) == 0 ? w.long_hold_ns() : w.hold_ns());
    a.counter.store(c + 1, kRelaxed);
    ++st.acquisitions;  // in the simulator no time passes between the store and this count
    last_acquire = w.now();
    if (a.owner.exchange(0, kRelaxed) != me) w.violation();
    w.unlock_begin(true);
    a.lock.unlock();
    w.unlock_end(true);
    w.pause(w.below(kOutsidePauses));
  }
}

template <class Env, class L, class World>
void reader_loop(Arena<Env, L>& a, ThreadStats& st, std::int64_t& last_acquire, World& w) {
  if constexpr (requires(L & l) {
                  l.lock_shared();
                  l.unlock_shared();
                }) {
    st.reader = true;
    while (w.running()) {
      const std::int64_t t0 = w.now();
      w.lock_begin(false);
      a.lock.lock_shared();
      w.lock_end(false);
      st.max_wait_ns = std::max(st.max_wait_ns, w.now() - t0);
      a.readers.fetch_add(1, kRelaxed);
      if (a.owner.load(kRelaxed) != 0) w.violation();
      w.hold(w.hold_ns());
      if (a.owner.load(kRelaxed) != 0) w.violation();
      a.readers.fetch_sub(1, kRelaxed);
      ++st.acquisitions;
      last_acquire = w.now();
      w.unlock_begin(false);
      a.lock.unlock_shared();
      w.unlock_end(false);
      w.pause(w.below(kOutsidePauses));
    }
  } else {
    (void)a, (void)st, (void)last_acquire, (void)w;
  }
}

}  // namespace pvlock::torture
