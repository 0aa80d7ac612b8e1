// SPDX-License-Identifier: GPL-2.0-only
// will-it-scale on real threads: every thread loops lock -> critical section -> unlock ->
// outside work, for a fixed time, and the run reports total throughput and how evenly it was
// shared (fairness = min/max operations per thread). The locks are every non-negative-control
// lock of registry.hpp (rw locks: their write side) plus the peers of native/peers/peers.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pvlock/env/lock_events.hpp"
#include "pvlock/lock/policy.hpp"

namespace pvlock::native {

inline constexpr int kBenchMaxThreads = 512;
inline constexpr int kBenchMaxCsLines = 4096;

struct BenchOptions {
  std::vector<std::string> locks;  // empty = every bench lock
  std::vector<int> threads;        // empty = default_thread_counts()
  double duration_s = 1.0;         // per (lock, threads) point
  int cs_lines = 1;                // shared cache lines written inside the critical section
  std::int64_t cs_ns = 0;          // busy-wait inside the critical section
  std::int64_t outside_ns = 0;     // busy-wait between unlock and the next lock
  double stuck_after_s = 30.0;     // watchdog: threads still running this long after stop
  LockPolicies policies{};
};

struct BenchLock {
  std::string name;
  std::string origin;  // "pvlock" (registry.hpp) or "peer"
  std::string kind;    // spin, sleeping, rw (write side benchmarked), peer
  std::string description;
};

struct BenchRow {
  std::string lock;
  std::string origin;
  int threads = 0;
  double duration_s = 0;  // measured, from the start signal to the stop signal
  std::uint64_t ops = 0;
  double ops_per_s = 0;
  // CPU time the workers consumed (spinning included) and operations per CPU-second: how
  // much CPU a lock burns per operation, and less sensitive than ops_per_s to other
  // processes taking CPU from the benchmark.
  double cpu_s = 0;
  double ops_per_cpu_s = 0;
  std::uint64_t min_per_thread = 0;
  std::uint64_t max_per_thread = 0;
  double fairness = 0;  // min_per_thread / max_per_thread, 0 if nothing ran
  bool stuck = false;   // watchdog fired; workers were left behind
  LockEventCounts counters{};
};

// pvlock's locks in registry order (negative controls skipped), then the peers.
std::vector<BenchLock> bench_locks();
bool is_bench_lock(std::string_view name);
std::string bench_lock_names();  // comma-separated, for error messages

// 1x, 2x, 3x and 4x the hardware threads (deduplicated, ascending).
std::vector<int> default_thread_counts();

// Runs one point. Throws std::invalid_argument for an unknown lock or threads out of range.
BenchRow run_bench_point(const std::string& lock, int threads, const BenchOptions& options);

// Runs every (lock, threads) point, locks outer, calling on_row after each; stops early
// (after reporting it) at a stuck point. Returns the rows.
std::vector<BenchRow> run_bench(const BenchOptions& options,
                                const std::function<void(const BenchRow&)>& on_row = {});

}  // namespace pvlock::native
