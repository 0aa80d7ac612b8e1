// SPDX-License-Identifier: GPL-2.0-only
#include "shim_probe.h"

#include "pvk/kernel.h"
#include "lock_events.h"

uint8_t probe_cmpxchg_u8(uint8_t *p, uint8_t old, uint8_t v) { return cmpxchg(p, old, v); }
uint16_t probe_xchg_relaxed_u16(uint16_t *p, uint16_t v) { return xchg_relaxed(p, v); }
int probe_try_cmpxchg_acquire(int *p, int *old, int v) { return try_cmpxchg_acquire(p, old, v); }
int probe_try_cmpxchg_ptr(void **p, void **old, void *v) { return try_cmpxchg(p, old, v); }
void *probe_cmpxchg_release_ptr(void **p, void *old, void *v) { return cmpxchg_release(p, old, v); }

int probe_atomic_fetch_or_acquire(int *counter, int bits)
{
	return atomic_fetch_or_acquire(bits, (atomic_t *)counter);
}
void probe_atomic_andnot(int *counter, int bits) { atomic_andnot(bits, (atomic_t *)counter); }
void probe_atomic_add(int *counter, int v) { atomic_add(v, (atomic_t *)counter); }
int probe_atomic_xchg(int *counter, int v) { return atomic_xchg((atomic_t *)counter, v); }

uint8_t probe_smp_store_mb(uint8_t *p, uint8_t v)
{
	smp_store_mb(*p, v);
	return READ_ONCE(*p);
}
uint64_t probe_read_once_u64(const uint64_t *p) { return READ_ONCE(*p); }
void probe_write_once_ptr(void **p, void *v) { WRITE_ONCE(*p, v); }
int probe_smp_load_acquire(const int *p) { return smp_load_acquire(p); }
void probe_smp_store_release(int *p, int v) { smp_store_release(p, v); }

int probe_cond_load_nonzero(const int *p) { return smp_cond_load_relaxed(p, VAL != 0); }

int probe_cond_load_bounded(const int *p, int skip, int loops)
{
	int cnt = loops;

	return smp_cond_load_acquire(p, VAL != skip || !cnt--);
}

static DEFINE_PER_CPU(int, probe_int);

int *probe_this_cpu_int(void) { return this_cpu_ptr(&probe_int); }
int *probe_per_cpu_int(int cpu) { return per_cpu_ptr(&probe_int, cpu); }
void probe_this_cpu_add(int v) { this_cpu_add(probe_int, v); }

void probe_lockevent_pending(void) { lockevent_inc(lock_pending); }
void probe_lockevent_hops(int n) { lockevent_add(pv_hash_hops, n); }

int probe_warn(int cond) { return WARN(cond, "probe %d", cond); }

uint64_t probe_instance_lockevent(const void *percpu, size_t stride, int nr_cpus, int event)
{
	const size_t off = (size_t)((const char *)&lockevents[event] - __start_pvk_percpu);
	uint64_t sum = 0;

	for (int cpu = 0; cpu < nr_cpus; cpu++)
		sum += *(const unsigned long *)((const char *)percpu + (size_t)cpu * stride + off);
	return sum;
}
