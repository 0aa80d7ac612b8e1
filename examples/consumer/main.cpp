// SPDX-License-Identifier: GPL-2.0-only
// A pvlock user: every registered lock is an ordinary C++ BasicLockable, so it works with
// std::lock_guard. Four threads bump a shared counter under pvlock's paravirt qspinlock on
// the native environment; the program checks that no increment was lost and lists the
// registry. (pvqspinlock, not a FIFO spinlock such as MCS: with more threads than CPUs a
// FIFO spinlock hands the lock to descheduled threads and can take minutes; see
// docs/benchmarks.md.)
#include <cstdio>
#include <mutex>
#include <pvlock/env/native.hpp>
#include <pvlock/lock/qspinlock.hpp>
#include <pvlock/lock/registry.hpp>
#include <thread>
#include <vector>

int main() {
  constexpr int kThreads = 4;
  constexpr long kIters = 20'000;
  pvlock::Qspinlock<pvlock::NativeEnv, /*PV=*/true> lock;
  long counter = 0;

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (long i = 0; i < kIters; ++i) {
        std::lock_guard guard(lock);
        ++counter;
      }
    });
  }
  for (std::thread& t : threads) t.join();

  std::printf("locks:");
  for (const pvlock::LockInfo& info : pvlock::lock_infos<pvlock::NativeEnv>())
    std::printf(" %.*s", static_cast<int>(info.name.size()), info.name.data());
  std::printf("\ncounter = %ld (expected %ld)\n", counter, kThreads * kIters);
  if (counter != kThreads * kIters) {
    std::printf("FAILURE: lost updates\n");
    return 1;
  }
  std::printf("SUCCESS\n");
  return 0;
}
