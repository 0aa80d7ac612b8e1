// SPDX-License-Identifier: GPL-2.0-only
// The parallel point runner of every command that runs many independent simulations
// (reproduce, sweep, sensitivity through sweep, twin): body(i) for each i in [0, count), on
// up to `jobs` threads, the calling thread being one of them. Indices are handed out in
// order; the first exception a body throws stops the hand-out and is rethrown once every
// thread has finished the item it was on. Each simulation is single-threaded and
// deterministic, and callers file results by index, never by completion order, so the output
// does not depend on `jobs`.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace pvlock::harness {

template <class Body>
void parallel_for(std::size_t count, int jobs, Body&& body) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::exception_ptr error;
  const auto worker = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      try {
        body(i);
      } catch (...) {
        std::lock_guard g(mu);
        if (!error) error = std::current_exception();
        stop.store(true, std::memory_order_relaxed);
      }
    }
  };
  const std::size_t threads =
      std::max<std::size_t>(1, std::min(static_cast<std::size_t>(std::max(jobs, 1)), count));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace pvlock::harness
