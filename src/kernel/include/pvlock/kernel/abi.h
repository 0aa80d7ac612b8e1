/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The C ABI between the kernel's kernel/locking sources (compiled as C, unmodified, against
 * the shim headers in src/kernel/shim/include) and pvlock's Environment seam.
 *
 * Every operation the shim's linux/asm headers map -- READ_ONCE/WRITE_ONCE, the atomic_*,
 * xchg/cmpxchg families, barriers, cpu_relax, smp_processor_id, need_resched,
 * vcpu_is_preempted, pv_wait/pv_kick, sched_clock, lock event counters, WARN/BUG -- calls
 * one function of the `pvk_ops` table installed for the calling thread. The C++ side
 * (ops.hpp) builds one table per Env, so the same compiled kernel object runs on real
 * threads (NativeEnv) and on simulated vCPUs (SimEnv).
 *
 * Storage the kernel keeps in per-CPU variables and file statics lives in a `pvk_vm`: one
 * per kernel instance (one per simulated guest VM), so no two guests share a queue node,
 * a PV hash table or a counter.
 */
#ifndef PVLOCK_KERNEL_ABI_H
#define PVLOCK_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Memory orderings of the kernel's _relaxed/_acquire/_release/fully-ordered variants. */
enum pvk_order { PVK_RELAXED = 0, PVK_ACQUIRE = 1, PVK_RELEASE = 2, PVK_FULL = 3 };

/* Standalone barriers: smp_mb(), smp_rmb(), smp_wmb(). */
enum pvk_fence { PVK_MB = 0, PVK_RMB = 1, PVK_WMB = 2 };

/* One kernel instance's storage (see the file comment). */
struct pvk_vm {
  unsigned char *percpu; /* nr_cpus areas of percpu_stride bytes, laid out as the section */
  size_t percpu_stride;
  int nr_cpus;
  /* qspinlock_paravirt.h's two file statics, redirected here by pvk/prelude.h. */
  void *pv_lock_hash;
  unsigned int pv_lock_hash_bits;
};

struct pvk_ops {
  /* Accesses of 1, 2, 4 or 8 bytes; values travel zero-extended in a uint64_t. */
  uint64_t (*load)(const volatile void *p, unsigned size, int order);
  void (*store)(volatile void *p, unsigned size, uint64_t v, int order);
  uint64_t (*exchange)(volatile void *p, unsigned size, uint64_t v, int order);
  /* Returns the value found; the store happened iff it equals `old`. */
  uint64_t (*compare_exchange)(volatile void *p, unsigned size, uint64_t old, uint64_t v, int order);
  uint64_t (*fetch_add)(volatile void *p, unsigned size, uint64_t v, int order);
  uint64_t (*fetch_or)(volatile void *p, unsigned size, uint64_t v, int order);
  uint64_t (*fetch_and)(volatile void *p, unsigned size, uint64_t v, int order);
  void (*fence)(int kind);

  void (*cpu_relax)(void);
  int (*cpu)(void);
  int (*nr_cpus)(void);
  int (*need_resched)(void);
  int (*vcpu_is_preempted)(int cpu);
  void (*halt)(uint8_t *p, uint8_t v);
  void (*kick)(int cpu);
  uint64_t (*sched_clock)(void);
  /* lockevent_add(): `event` indexes the kernel's lock_events_list.h. */
  void (*lock_event)(int event, long n);
  struct pvk_vm *(*vm)(void);
  /* Zeroed memory owned by the current kernel instance (alloc_large_system_hash). */
  void *(*vm_alloc)(size_t size, size_t align);
  void (*warn)(const char *file, int line, const char *what);
  void (*bug)(const char *file, int line);
};

/* The table of the calling thread, installed by the C++ lock wrappers on every entry. */
extern __thread const struct pvk_ops *pvk_cur;

/* ---- Provided by the shim's C glue (shim/src/) -------------------------------------- */

/* Bytes one CPU's copy of the kernel's per-CPU variables takes, and its alignment. */
size_t pvk_percpu_size(void);
size_t pvk_percpu_align(void);
/* The kernel's lock event names (lock_events_list.h), in the kernel's order. */
int pvk_lock_event_count(void);
const char *pvk_lock_event_name(int event);

/* __pv_init_lock_hash() for the current kernel instance. */
void pvk_pv_init_lock_hash(void);

/* spin_lock()/spin_unlock()/spin_trylock() on a struct qspinlock (a 32-bit word): the
 * generic fast paths over the kernel's native_queued_spin_lock_slowpath() (native) or
 * __pv_queued_spin_lock_slowpath() and __pv_queued_spin_unlock() (paravirt). */
void pvk_native_spin_lock(void *lock);
void pvk_native_spin_unlock(void *lock);
void pvk_pv_spin_lock(void *lock);
void pvk_pv_spin_unlock(void *lock);
int pvk_spin_trylock(void *lock);

/* osq_lock()/osq_unlock() on a struct optimistic_spin_queue (a 32-bit word). */
int pvk_osq_lock(void *lock);
void pvk_osq_unlock(void *lock);

#ifdef __cplusplus
}
#endif

#endif /* PVLOCK_KERNEL_ABI_H */
