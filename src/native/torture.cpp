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

namespace pvlock::native {
namespace {

// State shared by the workers; kept alive by shared_ptr so a stuck run can leave detached
// threads behind without them touching freed memory.
template <class L>
struct Arena {
  L lock;
  // Exclusion checks use atomics so a broken lock shows up as a counted violation, not as
  // undefined behaviour (and ThreadSanitizer stays quiet about the negative control).
  alignas(64) std::atomic<int> owner{-1};
  alignas(64) std::atomic<int> readers{0};
  alignas(64) std::atomic<std::uint64_t> protected_counter{0};
  alignas(64) std::atomic<std::uint64_t> violations{0};
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::mutex done_mu;
  std::condition_variable done_cv;
  int running = 0;
  std::vector<ThreadStats> stats;
};

void busy_wait_ns(std::int64_t ns) {
  if (ns <= 0) return;
  const std::int64_t end = NativeEnv::now_ns() + ns;
  while (NativeEnv::now_ns() < end) NativeEnv::cpu_relax();
}

template <class L>
void writer_loop(Arena<L>& a, int id, const TortureOptions& o, std::uint32_t long_one_in) {
  std::mt19937_64 rng(o.seed * 1000003u + static_cast<std::uint64_t>(id));
  ThreadStats& st = a.stats[static_cast<std::size_t>(id)];
  while (!a.go.load(std::memory_order_acquire)) NativeEnv::cpu_relax();
  while (!a.stop.load(std::memory_order_relaxed)) {
    const std::int64_t t0 = NativeEnv::now_ns();
    a.lock.lock();
    st.max_wait_ns = std::max(st.max_wait_ns, NativeEnv::now_ns() - t0);
    if (a.owner.exchange(id, std::memory_order_relaxed) != -1)
      a.violations.fetch_add(1, std::memory_order_relaxed);
    if (a.readers.load(std::memory_order_relaxed) != 0)
      a.violations.fetch_add(1, std::memory_order_relaxed);
    // A read-modify-write split across the hold: a second holder makes an update vanish.
    const std::uint64_t c = a.protected_counter.load(std::memory_order_relaxed);
    busy_wait_ns(rng() % long_one_in == 0 ? o.long_hold_ns : o.hold_ns);
    a.protected_counter.store(c + 1, std::memory_order_relaxed);
    if (a.owner.exchange(-1, std::memory_order_relaxed) != id)
      a.violations.fetch_add(1, std::memory_order_relaxed);
    a.lock.unlock();
    ++st.acquisitions;
    // Outside work: a short, random pause so that acquisitions do not phase-lock.
    for (auto n = rng() % 32; n > 0; --n) NativeEnv::cpu_relax();
  }
}

template <class L>
void reader_loop(Arena<L>& a, int id, const TortureOptions& o) {
  if constexpr (requires(L & l) {
                  l.lock_shared();
                  l.unlock_shared();
                }) {
    std::mt19937_64 rng(o.seed * 1000003u + static_cast<std::uint64_t>(id));
    ThreadStats& st = a.stats[static_cast<std::size_t>(id)];
    st.reader = true;
    while (!a.go.load(std::memory_order_acquire)) NativeEnv::cpu_relax();
    while (!a.stop.load(std::memory_order_relaxed)) {
      const std::int64_t t0 = NativeEnv::now_ns();
      a.lock.lock_shared();
      st.max_wait_ns = std::max(st.max_wait_ns, NativeEnv::now_ns() - t0);
      a.readers.fetch_add(1, std::memory_order_relaxed);
      if (a.owner.load(std::memory_order_relaxed) != -1)
        a.violations.fetch_add(1, std::memory_order_relaxed);
      busy_wait_ns(o.hold_ns);
      if (a.owner.load(std::memory_order_relaxed) != -1)
        a.violations.fetch_add(1, std::memory_order_relaxed);
      a.readers.fetch_sub(1, std::memory_order_relaxed);
      a.lock.unlock_shared();
      ++st.acquisitions;
      for (auto n = rng() % 64; n > 0; --n) NativeEnv::cpu_relax();
    }
  } else {
    (void)a, (void)id, (void)o;
  }
}

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
  auto arena = std::make_shared<Arena<L>>();
  arena->stats.resize(static_cast<std::size_t>(total));
  arena->running = total;

  for (int id = 0; id < total; ++id) {
    std::thread([arena, id, o, long_one_in, writers = r.threads] {
      // Thread i is CPU i; if that id is busy (another run still exiting) take any free one.
      if (!NativeEnv::bind_cpu(id)) (void)NativeEnv::cpu();
      if (id < writers)
        writer_loop(*arena, id, o, long_one_in);
      else
        reader_loop(*arena, id, o);
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
  r.per_thread = arena->stats;
  bool first = true;
  for (const ThreadStats& s : r.per_thread) {
    r.max_wait_ns = std::max(r.max_wait_ns, s.max_wait_ns);
    if (s.reader) {
      r.read_acquisitions += s.acquisitions;
      continue;
    }
    r.acquisitions += s.acquisitions;
    r.min_per_thread = first ? s.acquisitions : std::min(r.min_per_thread, s.acquisitions);
    r.max_per_thread = std::max(r.max_per_thread, s.acquisitions);
    first = false;
  }
  if (!r.stuck) {
    // Lost updates of the protected counter are violations too.
    const std::uint64_t counted = arena->protected_counter.load();
    r.violations += counted > r.acquisitions ? counted - r.acquisitions : r.acquisitions - counted;
  }
  r.starvation = r.max_per_thread / 2 > r.min_per_thread;
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
