// Lock statistics per lock instance, in the shape of the kernel's /proc/lock_stat
// (CONFIG_LOCK_STAT, kernel/locking/lockdep.c), for any environment.
//
// The kernel wraps every spin_lock/mutex_lock in LOCK_CONTENDED(lock, try, lock): it first
// tries the lock; only if the trylock fails does it call lock_contended() (stamp the start
// of the wait, count a contention) and then take the lock the normal way; lock_acquired()
// then adds the wait time and stamps the start of the hold, and lock_release() adds the hold
// time. stat_lock()/stat_unlock() do the same around a pvlock lock, with Env::now_ns(), so
// the lock code itself carries no statistics and no #ifdef. The trylock-first placement is
// what a lockstat kernel runs: the trylock reads the word before its cmpxchg (the kernel's
// queued_spin_trylock does too), so a contended acquisition costs one extra cached read.
//
// A LockStat lives next to its lock (as the kernel's lockdep_map does) and is updated only
// by the task that holds or waits for the lock, so it needs no atomics in the simulator
// (one thread) and is approximate, like lock_stat's per-CPU counters, under native threads.
// Nothing here allocates after the name is set.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "pvlock/env/environment.hpp"

namespace pvlock {

struct LockStat {
  std::string name;  // class and instance, e.g. "ebizzy.zone" or "messaging.pipe_mutex[3]"

  // lock_stat's columns: a "bounce" is an acquisition (or contention) on another CPU than
  // the previous one, i.e. the lock's cache line moved.
  std::uint64_t con_bounces = 0;
  std::uint64_t contentions = 0;
  std::int64_t wait_min = std::numeric_limits<std::int64_t>::max();
  std::int64_t wait_max = 0;
  std::int64_t wait_total = 0;
  std::uint64_t acq_bounces = 0;
  std::uint64_t acquisitions = 0;
  std::uint64_t read_acquisitions = 0;  // of acquisitions, shared (rwsem readers)
  std::int64_t hold_min = std::numeric_limits<std::int64_t>::max();
  std::int64_t hold_max = 0;
  std::int64_t hold_total = 0;
  int last_cpu = -1;

  // Counters restart (e.g. at the end of a warm-up); the name stays.
  void reset() {
    const std::string keep = std::move(name);
    *this = LockStat{};
    name = std::move(keep);
  }
  void contended(int cpu) {
    ++contentions;
    if (last_cpu >= 0 && cpu != last_cpu) ++con_bounces;
  }
  void acquired(int cpu, std::int64_t waited, bool contended_wait, bool shared) {
    ++acquisitions;
    if (shared) ++read_acquisitions;
    if (last_cpu >= 0 && cpu != last_cpu) ++acq_bounces;
    last_cpu = cpu;
    if (!contended_wait) return;
    wait_total += waited;
    wait_min = std::min(wait_min, waited);
    wait_max = std::max(wait_max, waited);
  }
  void released(std::int64_t held) {
    hold_total += held;
    hold_min = std::min(hold_min, held);
    hold_max = std::max(hold_max, held);
  }
};

// LOCK_CONTENDED(lock, try, lock) + lock_acquired(). Returns the hold stamp to give to
// stat_unlock (held_lock->holdtime_stamp: per holder, so shared holders do not mix).
template <Environment Env, class L>
std::int64_t stat_lock(L& l, LockStat& s) {
  if (l.try_lock()) {
    const std::int64_t now = Env::now_ns();
    s.acquired(Env::cpu(), 0, false, false);
    return now;
  }
  const std::int64_t t0 = Env::now_ns();
  s.contended(Env::cpu());
  l.lock();
  const std::int64_t t1 = Env::now_ns();
  s.acquired(Env::cpu(), t1 - t0, true, false);
  return t1;
}

// spin_lock(): __raw_spin_lock() disables preemption *before* LOCK_CONTENDED, so the failed
// trylock is not a preemption point. pvlock's try_lock() brackets itself with
// preempt_disable/enable (spin_trylock() does); the outer bracket keeps the count above zero
// from the trylock to the lock, which then holds its own count until unlock.
template <Environment Env, class L>
std::int64_t stat_spin_lock(L& l, LockStat& s) {
  Env::preempt_disable();
  const std::int64_t stamp = stat_lock<Env>(l, s);
  Env::preempt_enable();
  return stamp;
}

// The same for a reader of an rw lock (down_read: LOCK_CONTENDED with __down_read_trylock).
template <Environment Env, class L>
std::int64_t stat_lock_shared(L& l, LockStat& s) {
  if (l.try_lock_shared()) {
    const std::int64_t now = Env::now_ns();
    s.acquired(Env::cpu(), 0, false, true);
    return now;
  }
  const std::int64_t t0 = Env::now_ns();
  s.contended(Env::cpu());
  l.lock_shared();
  const std::int64_t t1 = Env::now_ns();
  s.acquired(Env::cpu(), t1 - t0, true, true);
  return t1;
}

// lock_release(): the hold ends before the unlock is issued, as in the kernel.
template <Environment Env, class L>
void stat_unlock(L& l, LockStat& s, std::int64_t stamp) {
  s.released(Env::now_ns() - stamp);
  l.unlock();
}

template <Environment Env, class L>
void stat_unlock_shared(L& l, LockStat& s, std::int64_t stamp) {
  s.released(Env::now_ns() - stamp);
  l.unlock_shared();
}

}  // namespace pvlock
