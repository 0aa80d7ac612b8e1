// SPDX-License-Identifier: GPL-2.0-only
// Lock event counters, named as the kernel names them in
// kernel/locking/lock_events_list.h (exposed there under debugfs lock_event_counts/).
// One X-macro list so that every world (native, simulated) and every report uses the
// same names in the same order.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace pvlock {

// clang-format off
#define PVLOCK_LOCK_EVENTS(X)                                                       \
  /* qspinlock_paravirt.h: PV slow path */                                          \
  X(pv_hash_hops)        /* hash-table probes, summed (kernel: / pv_kick_unlock) */ \
  X(pv_kick_unlock)      /* kicks issued by the _Q_SLOW_VAL unlock */               \
  X(pv_kick_wake)        /* pv_wait() returns that followed a kick */               \
  X(pv_latency_kick)     /* ns spent in pv_kick() at unlock (sum) */                \
  X(pv_latency_wake)     /* ns from kick to the waiter leaving pv_wait (sum) */     \
  X(pv_lock_stealing)    /* hybrid unfair trylock succeeded */                      \
  X(pv_spurious_wakeup)  /* woke from pv_wait with nothing to do */                 \
  X(pv_wait_again)       /* queue head halted again after a wake-up */              \
  X(pv_wait_early)       /* non-head stopped spinning early (prev not running) */   \
  X(pv_wait_early_preempted) /* pvlock's own: ... because vcpu_is_preempted(prev) */ \
  X(pv_wait_head)        /* queue head halted */                                    \
  X(pv_wait_node)        /* non-head queue node halted */                           \
  /* qspinlock.c: native slow path */                                               \
  X(lock_pending)        /* acquired through the pending bit */                     \
  X(lock_slowpath)       /* entered queued_spin_lock_slowpath */                    \
  X(lock_use_node2)      /* used the 2nd per-CPU MCS node (nesting) */              \
  X(lock_use_node3)                                                                 \
  X(lock_use_node4)                                                                 \
  X(lock_no_node)        /* nesting beyond 4: spin on trylock without a node */     \
  /* virt_spin_lock (arch/x86/include/asm/qspinlock.h) */                           \
  X(virt_spin_lock)      /* slow path taken as test-and-set */                      \
  /* osq_lock.c */                                                                  \
  X(osq_lock)            /* osq_lock() calls that had to queue */                   \
  X(osq_lock_acquired)   /* ... and became the OSQ owner */                         \
  X(osq_unqueue)         /* left the queue (need_resched / preempted prev) */       \
  X(osq_unqueue_preempted) /* ... because the predecessor's vCPU was preempted */   \
  /* mutex.c */                                                                     \
  X(mutex_fastpath)      /* uncontended cmpxchg acquire */                          \
  X(mutex_opt_spin)      /* optimistic spinning attempted */                        \
  X(mutex_opt_lock)      /* acquired while spinning */                              \
  X(mutex_opt_fail)      /* spinning gave up, went to sleep path */                 \
  X(mutex_sleep)         /* waiter scheduled out */                                 \
  X(mutex_handoff)       /* unlock handed ownership to the first waiter */          \
  X(mutex_spin_preempted)/* owner-spin stopped: owner vCPU preempted */             \
  /* rwsem.c (names as in lock_events_list.h) */                                    \
  X(rwsem_sleep_reader)                                                             \
  X(rwsem_sleep_writer)                                                             \
  X(rwsem_wake_reader)                                                              \
  X(rwsem_wake_writer)                                                              \
  X(rwsem_opt_lock)                                                                 \
  X(rwsem_opt_fail)                                                                 \
  X(rwsem_opt_nospin)                                                               \
  X(rwsem_rlock)                                                                    \
  X(rwsem_rlock_steal)                                                              \
  X(rwsem_rlock_fast)                                                               \
  X(rwsem_rlock_fail)                                                               \
  X(rwsem_rlock_handoff)                                                            \
  X(rwsem_wlock)                                                                    \
  X(rwsem_wlock_fail)                                                               \
  X(rwsem_wlock_handoff)                                                            \
  X(rwsem_opt_rlock)     /* v5.3-v5.10: a reader took it while spinning */          \
  X(rwsem_opt_rlock2)    /* ... or by the reader-phase trylock after the spin */    \
  X(rwsem_opt_norspin)   /* ... reader spinning disabled on this rwsem */           \
  /* cost of vcpu_is_preempted() calls (seed 004) */                                \
  X(vcpu_is_preempted_calls)                                                        \
  /* kvm.c PV ticket lock, 3.12-3.19 (debugfs kvm-guest/spinlocks) */               \
  X(taken_slow)          /* a waiter entered the slow path to halt */               \
  X(taken_slow_pickup)   /* ... and found its ticket served before halting */       \
  X(released_slow)       /* unlock of a flagged, contended lock searched waiters */ \
  X(released_slow_kicked) /* ... and kicked the next ticket's CPU */
// clang-format on

enum class LockEvent : std::uint16_t {
#define PVLOCK_X(name) name,
  PVLOCK_LOCK_EVENTS(PVLOCK_X)
#undef PVLOCK_X
};

inline constexpr std::size_t kLockEventCount = 0
#define PVLOCK_X(name) +1
    PVLOCK_LOCK_EVENTS(PVLOCK_X)
#undef PVLOCK_X
    ;

inline constexpr std::array<std::string_view, kLockEventCount> kLockEventNames = {
#define PVLOCK_X(name) #name,
    PVLOCK_LOCK_EVENTS(PVLOCK_X)
#undef PVLOCK_X
};

constexpr std::string_view lock_event_name(LockEvent e) {
  return kLockEventNames[static_cast<std::size_t>(e)];
}

// A plain snapshot of all counters; worlds sum their per-CPU/per-thread copies into it.
struct LockEventCounts {
  std::array<std::uint64_t, kLockEventCount> v{};
  std::uint64_t operator[](LockEvent e) const { return v[static_cast<std::size_t>(e)]; }
  std::uint64_t& operator[](LockEvent e) { return v[static_cast<std::size_t>(e)]; }
  LockEventCounts& operator+=(const LockEventCounts& o) {
    for (std::size_t i = 0; i < kLockEventCount; ++i) v[i] += o.v[i];
    return *this;
  }
};

}  // namespace pvlock
