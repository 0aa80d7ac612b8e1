// SPDX-License-Identifier: GPL-2.0-only
#include "native/bench.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "native/peers/peers.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"

namespace pvlock::native {
namespace {

const char* kind_name(LockKind k) {
  switch (k) {
    case LockKind::spin:
      return "spin";
    case LockKind::sleeping:
      return "sleeping";
    case LockKind::rw:
      return "rw";
  }
  return "spin";
}

// Calls f.template operator()<L>(const BenchLock&) for every bench lock: the registry's
// locks (negative controls skipped; rw locks are driven through lock()/unlock(), their
// write side), then the peers.
template <class F>
void for_each_bench_lock(F&& f) {
  for_each_lock<NativeEnv>([&]<class L>(const LockInfo& info) {
    if (info.negative_control) return;
    f.template operator()<L>(BenchLock{std::string(info.name), "pvlock", kind_name(info.kind),
                                       std::string(info.description)});
  });
  peers::for_each_peer([&]<class L>(const peers::PeerInfo& info) {
    f.template operator()<L>(
        BenchLock{std::string(info.name), "peer", "peer", std::string(info.description)});
  });
}

struct alignas(64) SharedLine {
  std::atomic<std::uint64_t> v{0};
};

struct alignas(64) ThreadSlot {
  std::uint64_t ops = 0;
  std::int64_t cpu_ns = 0;  // CPU time the thread consumed while measuring
};

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// State shared by the workers; kept alive by shared_ptr so a stuck run can leave detached
// threads behind without them touching freed memory.
template <class L>
struct Arena {
  explicit Arena(int threads, int cs_lines)
      : lines(static_cast<std::size_t>(cs_lines)), slots(static_cast<std::size_t>(threads)) {}
  L lock;
  std::vector<SharedLine> lines;  // the data the critical section writes
  std::vector<ThreadSlot> slots;
  alignas(64) std::atomic<int> ready{0};
  alignas(64) std::atomic<bool> go{false};
  alignas(64) std::atomic<bool> stop{false};
  std::mutex done_mu;
  std::condition_variable done_cv;
  int running = 0;
};

// Busy-waits for --cs-ns / --outside-ns. clock_gettime() costs ~20 ns on metal but ~70 ns in
// a VM, too coarse for waits of a few hundred ns, so on x86 the wait counts TSC ticks,
// calibrated once against CLOCK_MONOTONIC (an invariant TSC is assumed, as the kernel's
// tsc clocksource does).
class SpinClock {
 public:
  static const SpinClock& get() {
    static const SpinClock clock;
    return clock;
  }
  void wait_ns(std::int64_t ns) const {
    if (ns <= 0) return;
#if defined(__x86_64__) || defined(__i386__)
    if (ticks_per_ns_ > 0) {
      const std::uint64_t end = __rdtsc() + static_cast<std::uint64_t>(ns * ticks_per_ns_);
      while (__rdtsc() < end) NativeEnv::cpu_relax();
      return;
    }
#endif
    const std::int64_t end = NativeEnv::now_ns() + ns;
    while (NativeEnv::now_ns() < end) NativeEnv::cpu_relax();
  }

 private:
  SpinClock() {
#if defined(__x86_64__) || defined(__i386__)
    const std::int64_t t0 = NativeEnv::now_ns();
    const std::uint64_t c0 = __rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::int64_t t1 = NativeEnv::now_ns();
    const std::uint64_t c1 = __rdtsc();
    if (t1 > t0 && c1 > c0)
      ticks_per_ns_ = static_cast<double>(c1 - c0) / static_cast<double>(t1 - t0);
#endif
  }
  double ticks_per_ns_ = 0;  // 0: fall back to clock_gettime()
};

void busy_wait_ns(std::int64_t ns) { SpinClock::get().wait_ns(ns); }

template <class L>
void worker(Arena<L>& a, int id, const BenchOptions& o) {
  a.ready.fetch_add(1, std::memory_order_acq_rel);
  while (!a.go.load(std::memory_order_acquire)) std::this_thread::yield();
  const std::int64_t cpu0 = thread_cpu_ns();
  std::uint64_t ops = 0;
  while (!a.stop.load(std::memory_order_relaxed)) {
    a.lock.lock();
    // Relaxed load + store, not an atomic RMW: the cost of a plain cache-line write, and
    // no data race for ThreadSanitizer even for peers whose atomics it cannot see.
    for (SharedLine& line : a.lines)
      line.v.store(line.v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    busy_wait_ns(o.cs_ns);
    a.lock.unlock();
    ++ops;
    busy_wait_ns(o.outside_ns);
  }
  ThreadSlot& slot = a.slots[static_cast<std::size_t>(id)];
  slot.ops = ops;
  slot.cpu_ns = thread_cpu_ns() - cpu0;
}

template <class L>
BenchRow run_typed(const BenchLock& info, int threads, const BenchOptions& o) {
  BenchRow r;
  r.lock = info.name;
  r.origin = info.origin;
  r.threads = threads;

  if (o.cs_ns > 0 || o.outside_ns > 0) (void)SpinClock::get();  // calibrate before the run
  NativeEnv::policies() = o.policies;
  NativeEnv::reset_counters();
  auto arena = std::make_shared<Arena<L>>(threads, o.cs_lines);
  arena->running = threads;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(threads));
  for (int id = 0; id < threads; ++id) {
    workers.emplace_back([arena, id, o] {
      // Thread i is CPU i; if that id is still held by an exiting thread, take any free one.
      if (!NativeEnv::bind_cpu(id)) (void)NativeEnv::cpu();
      worker(*arena, id, o);
      std::lock_guard g(arena->done_mu);
      if (--arena->running == 0) arena->done_cv.notify_all();
    });
  }
  while (arena->ready.load(std::memory_order_acquire) < threads) std::this_thread::yield();
  const std::int64_t t0 = NativeEnv::now_ns();
  arena->go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration_s));
  arena->stop.store(true, std::memory_order_relaxed);
  const std::int64_t t1 = NativeEnv::now_ns();
  {
    std::unique_lock g(arena->done_mu);
    r.stuck = !arena->done_cv.wait_for(g, std::chrono::duration<double>(o.stuck_after_s),
                                       [&] { return arena->running == 0; });
  }
  for (std::thread& t : workers) {
    if (r.stuck)
      t.detach();
    else
      t.join();  // also runs the thread's exit handlers, which free its CPU id
  }
  if (r.stuck) return r;

  r.duration_s = static_cast<double>(t1 - t0) / 1e9;
  bool first = true;
  for (const ThreadSlot& s : arena->slots) {
    r.ops += s.ops;
    r.cpu_s += static_cast<double>(s.cpu_ns) / 1e9;
    r.min_per_thread = first ? s.ops : std::min(r.min_per_thread, s.ops);
    r.max_per_thread = std::max(r.max_per_thread, s.ops);
    first = false;
  }
  r.ops_per_s = r.duration_s > 0 ? static_cast<double>(r.ops) / r.duration_s : 0;
  r.ops_per_cpu_s = r.cpu_s > 0 ? static_cast<double>(r.ops) / r.cpu_s : 0;
  r.fairness = r.max_per_thread == 0
                   ? 0.0
                   : static_cast<double>(r.min_per_thread) / static_cast<double>(r.max_per_thread);
  r.counters = NativeEnv::read_counters();
  return r;
}

}  // namespace

std::vector<BenchLock> bench_locks() {
  std::vector<BenchLock> out;
  for_each_bench_lock([&]<class L>(const BenchLock& info) { out.push_back(info); });
  return out;
}

bool is_bench_lock(std::string_view name) {
  for (const BenchLock& l : bench_locks())
    if (l.name == name) return true;
  return false;
}

std::string bench_lock_names() {
  std::string names;
  for (const BenchLock& l : bench_locks()) names += (names.empty() ? "" : ", ") + l.name;
  return names;
}

std::vector<int> default_thread_counts() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> out;
  for (int k = 1; k <= 4; ++k) out.push_back(std::min(k * cores, kBenchMaxThreads));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

BenchRow run_bench_point(const std::string& lock, int threads, const BenchOptions& options) {
  if (threads < 1 || threads > kBenchMaxThreads)
    throw std::invalid_argument("threads must be between 1 and " +
                                std::to_string(kBenchMaxThreads));
  if (options.cs_lines < 0 || options.cs_lines > kBenchMaxCsLines)
    throw std::invalid_argument("cs_lines must be between 0 and " +
                                std::to_string(kBenchMaxCsLines));
  BenchRow row;
  bool found = false;
  for_each_bench_lock([&]<class L>(const BenchLock& info) {
    if (found || info.name != lock) return;
    found = true;
    row = run_typed<L>(info, threads, options);
  });
  if (!found) throw std::invalid_argument("unknown lock '" + lock + "'");
  return row;
}

std::vector<BenchRow> run_bench(const BenchOptions& options,
                                const std::function<void(const BenchRow&)>& on_row) {
  std::vector<std::string> locks = options.locks;
  if (locks.empty())
    for (const BenchLock& l : bench_locks()) locks.push_back(l.name);
  const std::vector<int> threads =
      options.threads.empty() ? default_thread_counts() : options.threads;
  std::vector<BenchRow> rows;
  for (const std::string& lock : locks) {
    for (int n : threads) {
      rows.push_back(run_bench_point(lock, n, options));
      if (on_row) on_row(rows.back());
      if (rows.back().stuck) return rows;
    }
  }
  return rows;
}

}  // namespace pvlock::native
