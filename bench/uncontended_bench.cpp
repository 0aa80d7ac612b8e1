// Uncontended lock/unlock latency of every spinlock (one thread, lock always free).
#include <benchmark/benchmark.h>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/mcs.hpp"
#include "pvlock/lock/tas.hpp"
#include "pvlock/lock/ticket.hpp"

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

BENCHMARK_TEMPLATE(BM_Uncontended, pvlock::TasLock<pvlock::NativeEnv>);
BENCHMARK_TEMPLATE(BM_Uncontended, pvlock::TicketLock<pvlock::NativeEnv>);
BENCHMARK_TEMPLATE(BM_Uncontended, pvlock::McsLock<pvlock::NativeEnv>);

}  // namespace
