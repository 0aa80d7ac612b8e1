// SPDX-License-Identifier: GPL-2.0-only
#include "heap_hooks.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace {

std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_allocs{0};
std::atomic<std::size_t> g_skew{0};

// Every ordinary block carries a 16-byte header in front of the caller's pointer holding
// the distance back to what malloc returned, so delete finds it whatever the skew was when
// the block was made. malloc's 16-byte alignment is kept: the skew is a multiple of 16.
constexpr std::size_t kHeader = 16;

void* allocate(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1);
  const std::size_t skew = g_skew.load(std::memory_order_relaxed);
  auto* raw = static_cast<unsigned char*>(std::malloc(n + kHeader + skew));
  if (raw == nullptr) throw std::bad_alloc();
  unsigned char* p = raw + kHeader + skew;
  const std::size_t back = kHeader + skew;
  std::memcpy(p - sizeof back, &back, sizeof back);
  return p;
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  auto* q = static_cast<unsigned char*>(p);
  std::size_t back = 0;
  std::memcpy(&back, q - sizeof back, sizeof back);
  std::free(q - back);
}

}  // namespace

namespace pvlock::sim::testing {

void set_allocation_counting(bool on) { g_counting.store(on); }
std::uint64_t allocation_count() { return g_allocs.load(); }
void reset_allocation_count() { g_allocs.store(0); }
void set_heap_skew(std::size_t bytes) {
  if (bytes % 16 != 0 || bytes > 48) throw std::invalid_argument("heap skew");
  g_skew.store(bytes);
}

}  // namespace pvlock::sim::testing

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1);
  const auto al = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
