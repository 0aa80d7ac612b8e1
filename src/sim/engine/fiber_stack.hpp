// SPDX-License-Identifier: GPL-2.0-only
// Fiber stacks carved from large anonymous mappings and committed lazily: a stack costs the
// pages its task actually touched (typically one or two), not its reserved size, so a guest
// of ~16k messaging tasks costs tens of MiB instead of 16k x 64 KiB. A freed stack's pages
// go back to the kernel (MADV_DONTNEED) and its slot is reused. One pool per thread: a
// simulation runs on one thread, and parallel runs (reproduce --jobs) do not share a lock.
//
// Slots have no guard page between them, like the malloc'd stacks they replace (a guard
// page per slot would split the mapping into two VMAs per task, and 16k tasks per run on
// two threads come near vm.max_map_count); the reserved size is generous instead.
#pragma once

#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <functional>

namespace pvlock::sim {

inline constexpr std::size_t kFiberStackBytes = 256 * 1024;

// Boost.Context's StackAllocator concept over the calling thread's pool.
class PooledStack {
 public:
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sc) noexcept;
};

// Runs a fiber's body below a pad of the current skew (0 unless a test set one). Boost.Context
// rounds a stack's top down to 256 bytes, so without the pad every task's frames sit at the
// same offsets in every build; the layout test shifts them to show that no result depends
// on where a task's on-stack lock records (MCS nodes, rwsem waiters) fall in a cache line.
void run_fiber_body(const std::function<void()>& body);

// Test hook: the pad run_fiber_body() puts above every fiber body started after the call
// (a multiple of 16 bytes, below 256; 0 restores the plain layout). Not thread-local: the
// layout test runs simulations on one thread.
void set_fiber_stack_skew(std::size_t bytes);

}  // namespace pvlock::sim
