// SPDX-License-Identifier: GPL-2.0-only
// C functions compiled against the kernel shim (shim_probe.c), so that the tests exercise
// the shim's own macros: the access families, the condition waits, per-CPU variables,
// lock event counting and WARN.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint8_t probe_cmpxchg_u8(uint8_t* p, uint8_t old, uint8_t v);
uint16_t probe_xchg_relaxed_u16(uint16_t* p, uint16_t v);
int probe_try_cmpxchg_acquire(int* p, int* old, int v);
int probe_try_cmpxchg_ptr(void** p, void** old, void* v);
void* probe_cmpxchg_release_ptr(void** p, void* old, void* v);
int probe_atomic_fetch_or_acquire(int* counter, int bits);
void probe_atomic_andnot(int* counter, int bits);
void probe_atomic_add(int* counter, int v);
int probe_atomic_xchg(int* counter, int v);
uint8_t probe_smp_store_mb(uint8_t* p, uint8_t v);
uint64_t probe_read_once_u64(const uint64_t* p);
void probe_write_once_ptr(void** p, void* v);
int probe_smp_load_acquire(const int* p);
void probe_smp_store_release(int* p, int v);

// smp_cond_load_relaxed(p, VAL != 0): waits until *p is non-zero and returns it.
int probe_cond_load_nonzero(const int* p);
// smp_cond_load_acquire(p, VAL != skip || !cnt--) with cnt = loops: the pending-loop shape.
int probe_cond_load_bounded(const int* p, int skip, int loops);

// Per-CPU: the address of this CPU's / a given CPU's copy of a DEFINE_PER_CPU int.
int* probe_this_cpu_int(void);
int* probe_per_cpu_int(int cpu);
// this_cpu_add on that int.
void probe_this_cpu_add(int v);
// lockevent_inc(lock_pending) and lockevent_add(pv_hash_hops, n).
void probe_lockevent_pending(void);
void probe_lockevent_hops(int n);
// The kernel's own count of lock event `event` (lock_events_list.h order) in the per-CPU
// area `percpu` of one kernel instance (nr_cpus copies of `stride` bytes): the sum of the
// instance's lockevents[event] over its CPUs.
uint64_t probe_instance_lockevent(const void* percpu, size_t stride, int nr_cpus, int event);
// WARN(cond, ...): returns the condition.
int probe_warn(int cond);

#ifdef __cplusplus
}
#endif
