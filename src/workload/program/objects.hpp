// SPDX-License-Identifier: GPL-2.0-only
// The kernel objects a task program uses, built once at set-up: locks of any registry kind
// behind one virtual interface (a virtual call allocates nothing, and the interpreter is
// not instantiated once per lock type), wait queues, pipes, and a latency histogram.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pvlock/lock/registry.hpp"
#include "pvlock/stat/lock_stat.hpp"
#include "sim/guest/sim_env.hpp"
#include "workload/guest_api.hpp"
#include "workload/lock_watch.hpp"

namespace pvlock::workload::program {

using Env = sim::SimEnv;

// One lock instance, through the lock_stat wrapper (LOCK_CONTENDED) and the watchdog's
// view. `shared`: down_read() / up_read() of an rwsem.
class AnyLock {
 public:
  virtual ~AnyLock() = default;
  virtual std::int64_t lock(bool shared) = 0;
  virtual void unlock(bool shared, std::int64_t stamp) = 0;
  // Instances of one lock class (every task's mmap_lock) may share one lock_stat row, as
  // /proc/lock_stat has one per class.
  LockStat* stat = nullptr;
};

template <class L>
class alignas(64) LockOf final : public AnyLock {
 public:
  LockOf(LockStat* s, const std::string& name) {
    stat = s;
    stat_wait_lock(lock_, *s);
    watch_ = make_lock_watch(lock_, name);
  }
  std::int64_t lock(bool shared) override {
    api::lock_waiting(watch_);
    std::int64_t stamp = 0;
    if constexpr (requires(L & l) { l.lock_shared(); }) {
      stamp = shared ? stat_lock_shared<Env>(lock_, *stat) : stat_lock<Env>(lock_, *stat);
    } else {
      stamp = stat_lock<Env>(lock_, *stat);
    }
    api::lock_acquired(watch_);
    return stamp;
  }
  void unlock(bool shared, std::int64_t stamp) override {
    api::lock_releasing(watch_);
    if constexpr (requires(L & l) { l.unlock_shared(); }) {
      if (shared) {
        stat_unlock_shared<Env>(lock_, *stat, stamp);
        return;
      }
    }
    stat_unlock<Env>(lock_, *stat, stamp);
  }

 private:
  alignas(64) L lock_;
  sim::LockWatch watch_;
};

// A lock of registry kind `kind` (a lock name), or nullptr if there is none.
inline std::unique_ptr<AnyLock> make_lock(const std::string& kind, LockStat* stat,
                                          const std::string& watch_name) {
  std::unique_ptr<AnyLock> out;
  with_lock<Env>(kind, [&]<class L>(const LockInfo&) {
    out = std::make_unique<LockOf<L>>(stat, std::string(L::kName) + " " + watch_name);
  });
  return out;
}

// Latencies in ns, in log-linear buckets (32 per power of two: within 3%), preallocated.
class Histogram {
 public:
  static constexpr int kSub = 32;
  void add(std::int64_t ns) {
    ++n_;
    sum_ += static_cast<double>(ns);
    ++b_[static_cast<std::size_t>(bucket(ns < 0 ? 0 : static_cast<std::uint64_t>(ns)))];
  }
  std::uint64_t count() const { return n_; }
  double mean() const { return n_ == 0 ? 0 : sum_ / static_cast<double>(n_); }
  // The p-th percentile (0 < p < 100): the middle of the bucket that holds it.
  double percentile(double p) const {
    if (n_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(p / 100.0 * static_cast<double>(n_ - 1)) + 1;
    std::uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += b_[static_cast<std::size_t>(i)];
      if (seen >= rank) return (lower(i) + lower(i + 1)) / 2.0;
    }
    return lower(kBuckets);
  }
  void reset() {
    b_.fill(0);
    n_ = 0;
    sum_ = 0;
  }

 private:
  static constexpr int kBuckets = 64 * kSub;
  static int bucket(std::uint64_t v) {
    if (v < kSub) return static_cast<int>(v);
    const int e = 63 - __builtin_clzll(v);  // 2^e <= v
    const int shift = e - 5;                // kSub = 2^5 sub-buckets
    return (shift + 1) * kSub + static_cast<int>((v >> shift) - kSub);
  }
  static double lower(int i) {
    if (i < kSub) return i;
    const int shift = i / kSub - 1;
    return static_cast<double>((static_cast<std::uint64_t>(kSub + i % kSub)) << shift);
  }
  std::array<std::uint64_t, kBuckets> b_{};
  std::uint64_t n_ = 0;
  double sum_ = 0;
};

}  // namespace pvlock::workload::program
