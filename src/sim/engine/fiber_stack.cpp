// SPDX-License-Identifier: GPL-2.0-only
#include "sim/engine/fiber_stack.hpp"

#include <alloca.h>
#include <sys/mman.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <new>
#include <stdexcept>

namespace pvlock::sim {

namespace {

// 256 slots a mapping: 64 MiB of address space, nothing committed until touched. The pool's
// own bookkeeping is fixed-size (no heap): the simulator's steady state allocates nothing,
// and a fork/exit-heavy guest reuses slots.
constexpr std::size_t kSlotsPerChunk = 256;
constexpr std::size_t kChunkBytes = kSlotsPerChunk * kFiberStackBytes;
constexpr std::size_t kMaxChunks = 1024;  // 256k stacks a thread
constexpr std::size_t kWords = kSlotsPerChunk / 64;

class StackPool {
 public:
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool() {
    for (std::size_t c = 0; c < chunks_; ++c) munmap(chunk_[c].base, kChunkBytes);
  }

  char* take() {
    for (std::size_t c = first_free_; c < chunks_; ++c) {
      Chunk& k = chunk_[c];
      for (std::size_t w = 0; w < kWords; ++w) {
        if (k.free[w] == 0) continue;
        const auto b = static_cast<std::size_t>(std::countr_zero(k.free[w]));
        k.free[w] &= k.free[w] - 1;
        first_free_ = c;
        return k.base + kFiberStackBytes * (w * 64 + b);
      }
    }
    if (chunks_ == kMaxChunks) throw std::bad_alloc();
    void* m = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    Chunk& k = chunk_[chunks_++];
    k.base = static_cast<char*>(m);
    k.free.fill(~std::uint64_t{0});
    return take();
  }
  void give_back(char* s) noexcept {
    for (std::size_t c = 0; c < chunks_; ++c) {
      Chunk& k = chunk_[c];
      if (s < k.base || s >= k.base + kChunkBytes) continue;
      // The pages a finished task touched go back now; the slot is reused as fresh zero pages.
      madvise(s, kFiberStackBytes, MADV_DONTNEED);
      const auto i = static_cast<std::size_t>(s - k.base) / kFiberStackBytes;
      k.free[i / 64] |= std::uint64_t{1} << (i % 64);
      if (c < first_free_) first_free_ = c;
      return;
    }
  }

 private:
  struct Chunk {
    char* base = nullptr;
    std::array<std::uint64_t, kWords> free{};  // one bit per free slot
  };
  std::array<Chunk, kMaxChunks> chunk_{};
  std::size_t chunks_ = 0;
  std::size_t first_free_ = 0;  // no free slot in chunks before this one
};

std::atomic<std::size_t> g_stack_skew{0};

StackPool& pool() {
  thread_local StackPool p;
  return p;
}

}  // namespace

boost::context::stack_context PooledStack::allocate() {
  char* base = pool().take();
  boost::context::stack_context sc;
  sc.size = kFiberStackBytes;
  sc.sp = base + kFiberStackBytes;  // stacks grow down from the slot's top
  return sc;
}

void PooledStack::deallocate(boost::context::stack_context& sc) noexcept {
  pool().give_back(static_cast<char*>(sc.sp) - sc.size);
}

void set_fiber_stack_skew(std::size_t bytes) {
  if (bytes % 16 != 0 || bytes >= 256) throw std::invalid_argument("fiber stack skew");
  g_stack_skew.store(bytes, std::memory_order_relaxed);
}

// noinline: the pad must be a frame of its own above the body's, whatever the caller inlines.
[[gnu::noinline]] void run_fiber_body(const std::function<void()>& body) {
  const std::size_t skew = g_stack_skew.load(std::memory_order_relaxed);
  if (skew != 0) {
    // The volatile touch keeps the compiler from dropping the allocation.
    volatile char* pad = static_cast<char*>(alloca(skew));
    pad[0] = 0;
    body();
    pad[0] = 0;  // alive until the body returns
    return;
  }
  body();
}

}  // namespace pvlock::sim
