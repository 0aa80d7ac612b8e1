// SPDX-License-Identifier: GPL-2.0-only
// Uncontended lock/unlock latency of qspinlock and pvqspinlock (one thread, lock always
// free): the fast path cmpxchg plus, for PV, the cmpxchg unlock instead of a byte store.
#include <benchmark/benchmark.h>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/qspinlock.hpp"

namespace {

template <class L>
void BM_Uncontended(benchmark::State& state) {
  L lock;
  for (auto _ : state) {
    lock.lock();
    benchmark::ClobberMemory();
    lock.unlock();
  }
}

template <class L>
void BM_UncontendedTryLock(benchmark::State& state) {
  L lock;
  for (auto _ : state) {
    if (lock.try_lock()) lock.unlock();
    benchmark::ClobberMemory();
  }
}

BENCHMARK_TEMPLATE(BM_Uncontended, pvlock::QueuedSpinlock<pvlock::NativeEnv>);
BENCHMARK_TEMPLATE(BM_Uncontended, pvlock::PvQueuedSpinlock<pvlock::NativeEnv>);
BENCHMARK_TEMPLATE(BM_UncontendedTryLock, pvlock::QueuedSpinlock<pvlock::NativeEnv>);
BENCHMARK_TEMPLATE(BM_UncontendedTryLock, pvlock::PvQueuedSpinlock<pvlock::NativeEnv>);

}  // namespace
