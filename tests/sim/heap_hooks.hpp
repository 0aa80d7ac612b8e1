// SPDX-License-Identifier: GPL-2.0-only
// The sim test binary's global operator new: it counts allocations while counting is on
// (the allocation-free steady-state test) and can shift every ordinary allocation by a
// multiple of 16 bytes (the layout test: results must not depend on where the heap puts an
// object relative to a cache line).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pvlock::sim::testing {

void set_allocation_counting(bool on);
std::uint64_t allocation_count();
void reset_allocation_count();

// 0, 16, 32 or 48: added to the address of every allocation made from now on that is not
// over-aligned (an alignas(64) object keeps its alignment, as with the real allocator).
void set_heap_skew(std::size_t bytes);

}  // namespace pvlock::sim::testing
