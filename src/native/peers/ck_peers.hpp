// SPDX-License-Identifier: GPL-2.0-only
// Concurrency Kit spinlocks (libck-dev) as BasicLockable classes for `pvlock bench`:
// ck_fas (fetch-and-store test-and-set), ck_ticket (FIFO ticket) and ck_mcs (MCS queue).
// All three are header-only inline functions; PVLOCK_HAVE_CK is 1 when the headers exist.
#pragma once

#if __has_include(<ck_pr.h>) && __has_include(<spinlock/mcs.h>)
#define PVLOCK_HAVE_CK 1
#include <ck_pr.h>

#include <array>
#include <atomic>
#include <cstdint>

namespace pvlock::native::peers {
namespace ck_detail {
// ck is C: spinlock/mcs.h assigns ck_pr_fas_ptr()'s void* to a node pointer, which C++
// rejects. While the three headers are parsed, the call goes through this proxy, which
// converts to any object pointer; the functions stay inline, so ck is measured at full speed.
struct VoidPtr {
  void* p;
  template <class T>
  operator T*() const {
    return static_cast<T*>(p);
  }
};
}  // namespace ck_detail
}  // namespace pvlock::native::peers

#define ck_pr_fas_ptr(t, v) (::pvlock::native::peers::ck_detail::VoidPtr{(ck_pr_fas_ptr)((t), (v))})
#include <spinlock/fas.h>
#include <spinlock/mcs.h>
#include <spinlock/ticket.h>
#undef ck_pr_fas_ptr

namespace pvlock::native::peers {

class CkFas {
 public:
  void lock() { ck_spinlock_fas_lock(&s_); }
  bool try_lock() { return ck_spinlock_fas_trylock(&s_); }
  void unlock() { ck_spinlock_fas_unlock(&s_); }

 private:
  ck_spinlock_fas_t s_ = CK_SPINLOCK_FAS_INITIALIZER;
};

class CkTicket {
 public:
  CkTicket() { ck_spinlock_ticket_init(&s_); }
  void lock() { ck_spinlock_ticket_lock(&s_); }
  bool try_lock() { return ck_spinlock_ticket_trylock(&s_); }
  void unlock() { ck_spinlock_ticket_unlock(&s_); }

 private:
  ck_spinlock_ticket_t s_;
};

// ck_mcs takes a queue node per acquisition. To be BasicLockable, nodes come from a small
// per-thread pool and the holder's node is remembered in the lock for unlock() — the same
// scheme as pvlock's McsLock, so the comparison measures the algorithm, not the API.
class CkMcs {
 public:
  void lock() {
    ck_spinlock_mcs_context_t* node = pool().alloc();
    ck_spinlock_mcs_lock(&queue_, node);
    holder_.store(node, std::memory_order_relaxed);
  }
  bool try_lock() {
    ck_spinlock_mcs_context_t* node = pool().alloc();
    if (!ck_spinlock_mcs_trylock(&queue_, node)) {
      pool().free(node);
      return false;
    }
    holder_.store(node, std::memory_order_relaxed);
    return true;
  }
  void unlock() {
    ck_spinlock_mcs_context_t* node = holder_.load(std::memory_order_relaxed);
    ck_spinlock_mcs_unlock(&queue_, node);
    pool().free(node);
  }

 private:
  struct Pool {
    static constexpr int kNodes = 4;
    std::array<ck_spinlock_mcs_context_t, kNodes> nodes{};
    std::uint32_t used = 0;
    ck_spinlock_mcs_context_t* alloc() {
      for (int i = 0; i < kNodes; ++i) {
        if ((used & (1u << i)) == 0) {
          used |= 1u << i;
          return &nodes[static_cast<std::size_t>(i)];
        }
      }
      return new ck_spinlock_mcs_context_t{};
    }
    void free(ck_spinlock_mcs_context_t* n) {
      if (n < nodes.data() || n >= nodes.data() + kNodes) {
        delete n;
        return;
      }
      used &= ~(1u << static_cast<std::uint32_t>(n - nodes.data()));
    }
  };
  static Pool& pool() {
    thread_local Pool p;
    return p;
  }

  ck_spinlock_mcs_t queue_ = CK_SPINLOCK_MCS_INITIALIZER;
  // Written and read only by the holder; atomic only so that ThreadSanitizer, which cannot
  // see ck's inline-asm synchronisation, does not flag the hand-over between holders.
  std::atomic<ck_spinlock_mcs_context_t*> holder_{nullptr};
};

}  // namespace pvlock::native::peers

#else
#define PVLOCK_HAVE_CK 0
#endif
