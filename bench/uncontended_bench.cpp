// SPDX-License-Identifier: GPL-2.0-only
// Uncontended lock/unlock latency (one thread, the lock always free) of every lock in the
// registry (negative controls skipped) and of every peer lock `pvlock bench` compares with.
// Names: BM_Uncontended/<lock>. The goal in docs/benchmarks.md: pvlock's locks <= 1.1x tas.
//
// BM_Uncontended re-locks right after unlocking. For qspinlock that measures a
// store-forwarding stall: unlock writes the locked *byte*, and the next lock's 32-bit
// cmpxchg cannot be forwarded from that narrower store. BM_UncontendedSpaced/<lock> puts a
// fixed gap of compiler-opaque work (BM_Gap alone) between unlock and lock, as real code
// has, so the store drains; compare it with BM_UncontendedSpaced/tas (the lock overlaps with
// the gap out of order, so subtracting BM_Gap would not give the lock's own cost).
#include <benchmark/benchmark.h>

#include <string>

#include "native/peers/peers.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"

namespace {

template <class L>
void uncontended(benchmark::State& state) {
  (void)pvlock::NativeEnv::cpu();  // take a CPU id outside the timed loop
  L lock;
  for (auto _ : state) {
    lock.lock();
    benchmark::ClobberMemory();
    lock.unlock();
  }
}

inline void gap() {
  for (int i = 0; i < 32; ++i) benchmark::ClobberMemory();
}

void gap_only(benchmark::State& state) {
  for (auto _ : state) gap();
}

template <class L>
void uncontended_spaced(benchmark::State& state) {
  (void)pvlock::NativeEnv::cpu();
  L lock;
  for (auto _ : state) {
    lock.lock();
    benchmark::ClobberMemory();
    lock.unlock();
    gap();
  }
}

template <class L>
void add(std::string_view name) {
  benchmark::RegisterBenchmark(("BM_Uncontended/" + std::string(name)).c_str(), uncontended<L>);
  benchmark::RegisterBenchmark(("BM_UncontendedSpaced/" + std::string(name)).c_str(),
                               uncontended_spaced<L>);
}

const bool registered = [] {
  benchmark::RegisterBenchmark("BM_Gap", gap_only);
  pvlock::for_each_lock<pvlock::NativeEnv>([]<class L>(const pvlock::LockInfo& info) {
    if (!info.negative_control) add<L>(info.name);
  });
  pvlock::native::peers::for_each_peer(
      []<class L>(const pvlock::native::peers::PeerInfo& info) { add<L>(info.name); });
  return true;
}();

}  // namespace
