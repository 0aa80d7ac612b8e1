// SPDX-License-Identifier: GPL-2.0-only
// One kernel instance's storage behind the shim: the per-CPU areas of the kernel files'
// DEFINE_PER_CPU variables, their redirected file statics and what alloc_large_system_hash
// handed out. It is an Env::global object, so it is one per process natively and one per
// guest VM in the simulator: no two guests share a qnode, an OSQ node, a PV hash table or
// a counter.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "pvlock/env/environment.hpp"
#include "pvlock/kernel/abi.h"

namespace pvlock::kernel {

struct Instance {
  pvk_vm vm{};
  std::atomic<int> state{0};  // 0 = new, 1 = being set up, 2 = ready

  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<void, Free>> memory;

  void* alloc(std::size_t size, std::size_t align) {
    const std::size_t rounded = (size + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
    if (p == nullptr) std::abort();
    std::memset(p, 0, rounded);
    memory.emplace_back(p);
    return p;
  }
};

// The instance of one build of the kernel files (variants.hpp): two builds in one guest do
// not share a PV hash table, a per-CPU area or its counters either, as two kernels would not.
template <class Build>
struct BuildInstance : Instance {};

}  // namespace pvlock::kernel
