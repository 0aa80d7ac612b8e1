// Uncontended lock/unlock latency (one thread, the lock always free) of every lock in the
// registry (negative controls skipped) and of every peer lock `pvlock bench` compares with.
// Names: BM_Uncontended/<lock>. The goal in docs/benchmarks.md: pvlock's locks <= 1.1x tas.
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

template <class L>
void add(std::string_view name) {
  benchmark::RegisterBenchmark(("BM_Uncontended/" + std::string(name)).c_str(), uncontended<L>);
}

const bool registered = [] {
  pvlock::for_each_lock<pvlock::NativeEnv>([]<class L>(const pvlock::LockInfo& info) {
    if (!info.negative_control) add<L>(info.name);
  });
  pvlock::native::peers::for_each_peer(
      []<class L>(const pvlock::native::peers::PeerInfo& info) { add<L>(info.name); });
  return true;
}();

}  // namespace
