// SPDX-License-Identifier: GPL-2.0-only
// Lock statistics per lock instance, in the shape of the kernel's /proc/lock_stat
// (CONFIG_LOCK_STAT, kernel/locking/lockdep.c), for any environment.
//
// The kernel wraps every spin_lock/mutex_lock in LOCK_CONTENDED(lock, try, lock): it tries
// the lock; only if that fails does it call lock_contended() (count a contention, stamp the
// start of the wait) and take the lock the normal way; lock_acquired() then adds the wait
// time and stamps the start of the hold, and lock_release() at unlock adds the hold time.
// stat_lock()/stat_unlock() record at the same points with Env::now_ns(), so the lock code
// itself carries no statistics and no #ifdef.
//
// One difference, on purpose: the kernel's trylock is a real access to the lock word, and
// in the simulator a real access is a cache-line transfer that changes the run (when the
// wrapper did issue it, every seed's reproduce figures moved, e.g. seed 000's revert effect
// from 1.8x to 0.9x in --quick). The seeds' kernels did not run CONFIG_LOCK_STAT, so the
// wrapper answers "would the trylock fail?" from its own bookkeeping instead -- the lock is
// held, or others are already waiting (qspinlock's fast path fails then too) -- and then
// takes the lock exactly as a kernel without lock_stat does. Recording never touches
// simulated memory, so a run with statistics is the same run as without.
//
// A LockStat lives next to its lock (as the kernel's lockdep_map does). The bookkeeping of
// holders and waiters is atomic (relaxed) so native threads may share it; the sums are
// updated by the holder or the waiter alone and are approximate under native threads, like
// lock_stat's per-CPU counters read without a lock. Nothing here allocates after set-up.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "pvlock/env/environment.hpp"

namespace pvlock {

struct LockStat {
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();

  std::string name;  // class and instance, e.g. "ebizzy.zone" or "messaging.pipe_mutex[3]"

  // lock_stat's columns: a "bounce" is an acquisition (or contention) on another CPU than
  // the previous acquisition's, i.e. the lock's cache line moved.
  std::uint64_t con_bounces = 0;
  std::uint64_t contentions = 0;
  std::int64_t wait_min = kNone;
  std::int64_t wait_max = 0;
  std::int64_t wait_total = 0;
  std::uint64_t acq_bounces = 0;
  std::uint64_t acquisitions = 0;
  std::uint64_t read_acquisitions = 0;  // of acquisitions, shared (rwsem readers)
  std::int64_t hold_min = kNone;
  std::int64_t hold_max = 0;
  std::int64_t hold_total = 0;

  // Bookkeeping (not reset with the counters: it describes the lock's current state).
  std::atomic<int> holders{0};  // 1 for an exclusive holder, n for readers
  std::atomic<int> waiters{0};
  std::atomic<int> last_cpu{-1};

  // A mutex's or rwsem's wait_lock is a lock instance of its own (/proc/lock_stat lists
  // &lock->wait_lock apart from the lock): its row, named "<this>.wait_lock", reported right
  // after this one. Created at set-up by stat_wait_lock(); shared, like this row, by every
  // instance of the lock class.
  std::unique_ptr<LockStat> wait_lock;

  LockStat() = default;
  LockStat(const LockStat&) = delete;
  LockStat& operator=(const LockStat&) = delete;

  // Counters restart (e.g. at the end of a warm-up); the name and the lock's state stay.
  void reset() {
    con_bounces = contentions = acq_bounces = acquisitions = read_acquisitions = 0;
    wait_min = hold_min = kNone;
    wait_max = wait_total = hold_max = hold_total = 0;
    if (wait_lock) wait_lock->reset();
  }

  // LOCK_CONTENDED's trylock, answered from the bookkeeping: it fails while the lock is
  // held (exclusively, or at all for a writer) or others wait.
  bool would_contend(bool shared) const {
    const int h = holders.load(std::memory_order_relaxed);
    const int w = waiters.load(std::memory_order_relaxed);
    return w > 0 || (shared ? h < 0 : h != 0);
  }
  void contended(int cpu) {
    ++contentions;
    waiters.fetch_add(1, std::memory_order_relaxed);
    if (const int last = last_cpu.load(std::memory_order_relaxed); last >= 0 && cpu != last)
      ++con_bounces;
  }
  void acquired(int cpu, bool was_contended, std::int64_t waited, bool shared) {
    if (was_contended) {
      waiters.fetch_sub(1, std::memory_order_relaxed);
      wait_total += waited;
      wait_min = std::min(wait_min, waited);
      wait_max = std::max(wait_max, waited);
    }
    // A writer is counted as -1 so that readers see it (would_contend(shared)).
    holders.fetch_add(shared ? 1 : -1, std::memory_order_relaxed);
    ++acquisitions;
    if (shared) ++read_acquisitions;
    if (const int last = last_cpu.exchange(cpu, std::memory_order_relaxed);
        last >= 0 && cpu != last)
      ++acq_bounces;
  }
  void released(std::int64_t held, bool shared) {
    holders.fetch_sub(shared ? 1 : -1, std::memory_order_relaxed);
    hold_total += held;
    hold_min = std::min(hold_min, held);
    hold_max = std::max(hold_max, held);
  }
};

// LOCK_CONTENDED(lock, try, lock) + lock_acquired() around l.lock() (spin_lock, mutex_lock,
// down_write). Returns the hold stamp to give to stat_unlock (held_lock->holdtime_stamp:
// per holder, so concurrent readers do not mix).
template <Environment Env, class L>
std::int64_t stat_lock(L& l, LockStat& s) {
  const bool contended = s.would_contend(false);
  const std::int64_t t0 = Env::now_ns();
  if (contended) s.contended(Env::cpu());
  l.lock();
  const std::int64_t t1 = Env::now_ns();
  s.acquired(Env::cpu(), contended, t1 - t0, false);
  return t1;
}

// The same for a reader of an rw lock (down_read).
template <Environment Env, class L>
std::int64_t stat_lock_shared(L& l, LockStat& s) {
  const bool contended = s.would_contend(true);
  const std::int64_t t0 = Env::now_ns();
  if (contended) s.contended(Env::cpu());
  l.lock_shared();
  const std::int64_t t1 = Env::now_ns();
  s.acquired(Env::cpu(), contended, t1 - t0, true);
  return t1;
}

// lock_release(): the hold ends before the unlock is issued, as in the kernel.
template <Environment Env, class L>
void stat_unlock(L& l, LockStat& s, std::int64_t stamp) {
  s.released(Env::now_ns() - stamp, false);
  l.unlock();
}

template <Environment Env, class L>
void stat_unlock_shared(L& l, LockStat& s, std::int64_t stamp) {
  s.released(Env::now_ns() - stamp, true);
  l.unlock_shared();
}

// Gives the wait_lock of `l` (a Mutex or RwSem; nothing for other locks) its lock_stat row,
// s.wait_lock, created on first use.
template <class L>
void stat_wait_lock(L& l, LockStat& s) {
  if constexpr (requires { l.wait_lock().set_stat(&s); }) {
    if (!s.wait_lock) {
      s.wait_lock = std::make_unique<LockStat>();
      s.wait_lock->name = s.name + ".wait_lock";
    }
    l.wait_lock().set_stat(s.wait_lock.get());
  }
}

}  // namespace pvlock
