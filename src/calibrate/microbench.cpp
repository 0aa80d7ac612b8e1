// SPDX-License-Identifier: GPL-2.0-only
#include "calibrate/microbench.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace pvlock::calibrate {
namespace {

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Restores the calling thread's affinity when the benchmark is done.
class PinGuard {
 public:
  explicit PinGuard(int cpu) {
    CPU_ZERO(&saved_);
    ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
    pin_to(cpu);
  }
  ~PinGuard() {
    if (ok_) (void)pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
  }
  PinGuard(const PinGuard&) = delete;
  PinGuard& operator=(const PinGuard&) = delete;

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

long futex(std::atomic<int>* addr, int op, int val) {
  return syscall(SYS_futex, reinterpret_cast<int*>(addr), op | FUTEX_PRIVATE_FLAG, val, nullptr,
                 nullptr, 0);
}

std::int64_t scaled(std::int64_t base, const BenchSize& z) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(base) * z.scale));
}

}  // namespace

Spread measure_l1_hit_ns(const BenchSize& z) {
  constexpr std::size_t kLines = 64;  // 4 KiB: well inside any L1d
  struct alignas(64) Line {
    Line* next;
  };
  std::vector<Line> lines(kLines);
  std::vector<std::size_t> order(kLines);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(12345);
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i = 0; i < kLines; ++i) lines[order[i]].next = &lines[order[(i + 1) % kLines]];
  const std::int64_t steps = scaled(2'000'000, z);
  std::vector<double> samples;
  Line* p = &lines[order[0]];
  for (int r = 0; r < z.reps; ++r) {
    const std::int64_t t0 = now_ns();
    for (std::int64_t i = 0; i < steps; ++i) {
      p = p->next;
      __asm__ __volatile__("" : "+r"(p));  // keep the chain dependent and un-hoisted
    }
    samples.push_back(static_cast<double>(now_ns() - t0) / static_cast<double>(steps));
  }
  return summarize(samples);
}

Spread measure_atomic_rmw_ns(const BenchSize& z) {
  alignas(64) std::atomic<std::uint64_t> word{0};
  const std::int64_t ops = scaled(1'000'000, z);
  std::vector<double> samples;
  for (int r = 0; r < z.reps; ++r) {
    const std::int64_t t0 = now_ns();
    for (std::int64_t i = 0; i < ops; ++i) word.fetch_add(1, std::memory_order_seq_cst);
    samples.push_back(static_cast<double>(now_ns() - t0) / static_cast<double>(ops));
  }
  return summarize(samples);
}

Spread measure_pause_ns(const BenchSize& z) {
  const std::int64_t n = scaled(200'000, z);
  std::vector<double> samples;
  for (int r = 0; r < z.reps; ++r) {
    const std::int64_t t0 = now_ns();
    for (std::int64_t i = 0; i < n; ++i) cpu_pause();
    samples.push_back(static_cast<double>(now_ns() - t0) / static_cast<double>(n));
  }
  return summarize(samples);
}

Spread measure_line_transfer_ns(const BenchSize& z, CpuPair pair) {
  constexpr std::int64_t kChunk = 500;
  constexpr std::int64_t kRepBudgetNs = 200'000'000;
  struct alignas(64) Shared {
    std::atomic<std::int64_t> turn{0};
  };
  Shared s;
  const std::int64_t chunks = std::max<std::int64_t>(1, scaled(100, z));
  std::vector<double> samples;
  for (int r = 0; r < z.reps; ++r) {
    s.turn.store(0);
    std::atomic<bool> ready{false};
    std::thread peer([&] {
      pin_to(pair.b);
      ready.store(true);
      // Odd values are the peer's to answer.
      for (std::int64_t want = 1;; want += 2) {
        std::int64_t v = 0;
        while ((v = s.turn.load(std::memory_order_acquire)) != want && v >= 0) cpu_pause();
        if (v < 0) return;  // -1: the main thread is done
        s.turn.store(want + 1, std::memory_order_release);
      }
    });
    PinGuard pin(pair.a);
    while (!ready.load()) cpu_pause();
    const std::int64_t budget_end = now_ns() + kRepBudgetNs;
    std::int64_t i = 0;
    for (std::int64_t c = 0; c < chunks && now_ns() < budget_end; ++c) {
      const std::int64_t t0 = now_ns();
      for (std::int64_t k = 0; k < kChunk; ++k, ++i) {
        s.turn.store(2 * i + 1, std::memory_order_release);
        while (s.turn.load(std::memory_order_acquire) != 2 * i + 2) cpu_pause();
      }
      samples.push_back(static_cast<double>(now_ns() - t0) / static_cast<double>(2 * kChunk));
    }
    s.turn.store(-1, std::memory_order_release);
    peer.join();
  }
  return summarize(samples);
}

FutexWake measure_futex_wake(const BenchSize& z, CpuPair pair) {
  const int wakes = std::max(8, z.reps * 12);
  alignas(64) std::atomic<int> word{0};
  alignas(64) std::atomic<std::int64_t> woke_at{0};
  alignas(64) std::atomic<int> sleeping{0};
  std::vector<double> latency, waker, bare;
  std::thread sleeper([&] {
    pin_to(pair.b);
    for (int i = 0; i < wakes; ++i) {
      sleeping.store(i + 1, std::memory_order_release);
      while (word.load(std::memory_order_acquire) == 0) futex(&word, FUTEX_WAIT, 0);
      woke_at.store(now_ns(), std::memory_order_release);
      word.store(0, std::memory_order_release);
    }
  });
  {
    PinGuard pin(pair.a);
    for (int i = 0; i < wakes; ++i) {
      while (sleeping.load(std::memory_order_acquire) != i + 1) std::this_thread::yield();
      // Give the sleeper time to enter FUTEX_WAIT and its CPU time to go idle.
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      woke_at.store(0, std::memory_order_relaxed);
      const std::int64_t t0 = now_ns();
      word.store(1, std::memory_order_release);
      const long n = futex(&word, FUTEX_WAKE, 1);
      const std::int64_t t1 = now_ns();
      std::int64_t t2 = 0;
      while ((t2 = woke_at.load(std::memory_order_acquire)) == 0) cpu_pause();
      if (n == 1) {  // the sleeper really slept (not still on its way into FUTEX_WAIT)
        latency.push_back(static_cast<double>(t2 - t0));
        waker.push_back(static_cast<double>(t1 - t0));
      }
      while (word.load(std::memory_order_acquire) != 0) cpu_pause();
      alignas(64) std::atomic<int> nobody{0};
      const std::int64_t t3 = now_ns();
      (void)futex(&nobody, FUTEX_WAKE, 1);
      bare.push_back(static_cast<double>(now_ns() - t3));
    }
  }
  sleeper.join();
  return FutexWake{summarize(latency), summarize(waker), summarize(bare)};
}

Spread measure_context_switch_ns(const BenchSize& z, int cpu) {
  const std::int64_t rounds = scaled(2'000, z);
  std::vector<double> samples;
  for (int r = 0; r < z.reps; ++r) {
    alignas(64) std::atomic<int> token{0};  // 0: main's turn, 1: peer's turn
    std::thread peer([&] {
      pin_to(cpu);
      for (std::int64_t i = 0; i < rounds; ++i) {
        while (token.load(std::memory_order_acquire) != 1) futex(&token, FUTEX_WAIT, 0);
        token.store(0, std::memory_order_release);
        futex(&token, FUTEX_WAKE, 1);
      }
    });
    PinGuard pin(cpu);
    const std::int64_t t0 = now_ns();
    for (std::int64_t i = 0; i < rounds; ++i) {
      token.store(1, std::memory_order_release);
      futex(&token, FUTEX_WAKE, 1);
      while (token.load(std::memory_order_acquire) != 0) futex(&token, FUTEX_WAIT, 1);
    }
    const std::int64_t t1 = now_ns();
    peer.join();
    samples.push_back(static_cast<double>(t1 - t0) / static_cast<double>(2 * rounds));
  }
  return summarize(samples);
}

TickGaps measure_tick(const BenchSize& z, int cpu) {
  constexpr std::int64_t kGapNs = 1'500;
  PinGuard pin(cpu);
  std::vector<double> starts, gaps;
  const std::int64_t end = now_ns() + static_cast<std::int64_t>(z.window_s * 1e9);
  std::int64_t prev = now_ns();
  while (prev < end) {
    const std::int64_t t = now_ns();
    if (t - prev > kGapNs) {
      starts.push_back(static_cast<double>(prev));
      gaps.push_back(static_cast<double>(t - prev));
    }
    prev = t;
  }
  std::vector<double> intervals;
  for (std::size_t i = 1; i < starts.size(); ++i) intervals.push_back(starts[i] - starts[i - 1]);
  return TickGaps{summarize(intervals), summarize(gaps)};
}

Spread measure_slice_ns(const BenchSize& z, int cpu) {
  // A stretch ends when the thread sees a hole longer than this: far longer than any
  // interrupt, far shorter than any slice.
  constexpr std::int64_t kSwitchedOutNs = 50'000;
  std::atomic<bool> go{false};
  std::vector<double> runs[2];
  const auto spin = [&](int id) {
    pin_to(cpu);
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    const std::int64_t end = now_ns() + static_cast<std::int64_t>(z.window_s * 1e9);
    std::int64_t run_start = now_ns(), prev = run_start;
    bool first = true;  // the first stretch started before the other thread ran: not a slice
    while (prev < end) {
      const std::int64_t t = now_ns();
      if (t - prev > kSwitchedOutNs) {
        // A stretch shorter than a hole is an interruption right after a switch, not a slice.
        if (!first && prev - run_start >= kSwitchedOutNs)
          runs[id].push_back(static_cast<double>(prev - run_start));
        first = false;
        run_start = t;
      }
      prev = t;
    }
  };
  std::thread a(spin, 0), b(spin, 1);
  go.store(true, std::memory_order_release);
  a.join();
  b.join();
  runs[0].insert(runs[0].end(), runs[1].begin(), runs[1].end());
  return summarize(runs[0]);
}

}  // namespace pvlock::calibrate
