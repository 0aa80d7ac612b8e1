// SPDX-License-Identifier: GPL-2.0-only
#include "native/torture.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"
#include "torture/body.hpp"

namespace pvlock::native {
namespace {

// State shared by the workers; kept alive by shared_ptr so a stuck run can leave detached
// threads behind without them touching freed memory.
template <class L>
struct Shared {
  torture::Arena<NativeEnv, L> arena;
  alignas(64) std::atomic<std::uint64_t> violations{0};
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::mutex done_mu;
  std::condition_variable done_cv;
  int running = 0;
  std::vector<ThreadStats> stats;
};

// The native world of the torture body: real time, busy-waits, a per-thread generator.
class NativeWorld {
 public:
  NativeWorld(const TortureOptions& o, int id, std::uint64_t long_one_in,
              const std::atomic<bool>& stop, std::atomic<std::uint64_t>& violations)
      : o_(o),
        rng_(o.seed * 1000003u + static_cast<std::uint64_t>(id)),
        long_one_in_(long_one_in),
        stop_(stop),
        violations_(violations) {}
  bool running() const { return !stop_.load(std::memory_order_relaxed); }
  static std::int64_t now() { return NativeEnv::now_ns(); }
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  static void hold(std::int64_t ns) {
    if (ns <= 0) return;
    const std::int64_t end = NativeEnv::now_ns() + ns;
    while (NativeEnv::now_ns() < end) NativeEnv::cpu_relax();
  }
  static void pause(std::uint64_t n) {
    for (; n > 0; --n) NativeEnv::cpu_relax();
  }
  std::int64_t hold_ns() const { return o_.hold_ns; }
  std::int64_t long_hold_ns() const { return o_.long_hold_ns; }
  std::uint64_t long_one_in() const { return long_one_in_; }
  void violation() { violations_.fetch_add(1, std::memory_order_relaxed); }
  static void lock_begin(bool) {}
  static void lock_end(bool) {}
  static void unlock_begin(bool) {}
  static void unlock_end(bool) {}

 private:
  const TortureOptions& o_;
  std::mt19937_64 rng_;
  std::uint64_t long_one_in_;
  const std::atomic<bool>& stop_;
  std::atomic<std::uint64_t>& violations_;
};

template <class L>
TortureResult run_typed(const LockInfo& info, const TortureOptions& o) {
  TortureResult r;
  r.lock = std::string(info.name);
  r.threads = o.threads > 0
                  ? o.threads
                  : 2 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  r.readers = info.kind == LockKind::rw ? o.readers : 0;
  r.duration_s = o.duration_s;
  const int total = r.threads + r.readers;
  const std::uint32_t long_one_in =
      o.long_hold_one_in != 0 ? o.long_hold_one_in : 2000u * static_cast<std::uint32_t>(r.threads);

  NativeEnv::policies() = o.policies;
  NativeEnv::reset_counters();
  auto arena = std::make_shared<Shared<L>>();
  arena->stats.resize(static_cast<std::size_t>(total));
  arena->running = total;

  for (int id = 0; id < total; ++id) {
    std::thread([arena, id, o, long_one_in, writers = r.threads] {
      // Thread i is CPU i; if that id is busy (another run still exiting) take any free one.
      if (!NativeEnv::bind_cpu(id)) (void)NativeEnv::cpu();
      while (!arena->go.load(std::memory_order_acquire)) NativeEnv::cpu_relax();
      NativeWorld w(o, id, long_one_in, arena->stop, arena->violations);
      ThreadStats& st = arena->stats[static_cast<std::size_t>(id)];
      std::int64_t last_acquire = 0;
      if (id < writers)
        torture::writer_loop(arena->arena, static_cast<std::uint32_t>(id + 1), st, last_acquire, w);
      else
        torture::reader_loop(arena->arena, st, last_acquire, w);
      // Leave the CPU id before saying we are done, so nothing of ours runs after the
      // main thread may have returned (thread-local destructors would otherwise race it).
      NativeEnv::unbind_cpu();
      std::lock_guard g(arena->done_mu);
      if (--arena->running == 0) arena->done_cv.notify_all();
    }).detach();
  }
  arena->go.store(true, std::memory_order_release);
  // Sleep out the duration in short naps, so that a cancel is seen within one of them.
  const auto t0 = std::chrono::steady_clock::now();
  const auto until = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(o.duration_s));
  for (auto now = t0; now < until; now = std::chrono::steady_clock::now()) {
    if (o.cancel != nullptr && o.cancel->load(std::memory_order_relaxed)) {
      r.interrupted = true;
      r.duration_s = std::chrono::duration<double>(now - t0).count();
      break;
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(20)));
  }
  arena->stop.store(true, std::memory_order_relaxed);
  {
    std::unique_lock g(arena->done_mu);
    r.stuck = !arena->done_cv.wait_for(g, std::chrono::duration<double>(o.stuck_after_s),
                                       [&] { return arena->running == 0; });
  }

  r.violations = arena->violations.load();
  // Lost updates are counted only when every thread stopped: a stuck one may still add.
  torture::summarize(r, arena->stats, arena->arena.counter.load(), !r.stuck);
  r.counters = NativeEnv::read_counters();
  return r;
}

}  // namespace

TortureResult run_torture(const TortureOptions& options) {
  TortureResult result;
  const bool found = with_lock<NativeEnv>(
      options.lock, [&]<class L>(const LockInfo& info) { result = run_typed<L>(info, options); });
  if (!found) throw std::invalid_argument("unknown lock '" + options.lock + "'");
  return result;
}

}  // namespace pvlock::native
