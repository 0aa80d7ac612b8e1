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

namespace pvlock::sim {

inline constexpr std::size_t kFiberStackBytes = 256 * 1024;

// Boost.Context's StackAllocator concept over the calling thread's pool.
class PooledStack {
 public:
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sc) noexcept;
};

}  // namespace pvlock::sim
