/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-CPU variables the way the kernel implements them: a DEFINE_PER_CPU variable is only a
 * prototype placed in a section of its own (pvk_percpu); every CPU has its copy of the
 * whole section at a per-CPU base, and per_cpu_ptr() adds the prototype's offset in the
 * section to that base. The bases belong to the current kernel instance (struct pvk_vm),
 * so each simulated guest has its own qnodes, OSQ nodes and counters.
 *
 * The arithmetic per-CPU ops (this_cpu_add, raw_cpu_inc, ...) go through pvk_percpu_add(),
 * which also forwards the kernel's lock event counters to the Environment's counters.
 */
#ifndef PVK_PERCPU_H
#define PVK_PERCPU_H

#include "pvk/sched.h"
#include "pvk/types.h"

extern char __start_pvk_percpu[];
extern char __stop_pvk_percpu[];

#define PVK_PERCPU_SECTION __attribute__((__section__("pvk_percpu")))
#define DEFINE_PER_CPU(type, name) PVK_PERCPU_SECTION __typeof__(type) name
#define DEFINE_PER_CPU_ALIGNED(type, name) \
	PVK_PERCPU_SECTION __attribute__((__aligned__(SMP_CACHE_BYTES))) __typeof__(type) name
#define DEFINE_PER_CPU_SHARED_ALIGNED(type, name) DEFINE_PER_CPU_ALIGNED(type, name)
#define DECLARE_PER_CPU(type, name) extern PVK_PERCPU_SECTION __typeof__(type) name

static inline void *pvk_percpu_ptr(const void *proto, int cpu)
{
	struct pvk_vm *vm = pvk_cur->vm();
	return vm->percpu + (size_t)cpu * vm->percpu_stride +
	       (size_t)((const char *)proto - __start_pvk_percpu);
}

#define per_cpu_ptr(ptr, cpu) ((__typeof__(ptr))pvk_percpu_ptr((const void *)(ptr), (cpu)))
#define this_cpu_ptr(ptr) per_cpu_ptr((ptr), smp_processor_id())
#define raw_cpu_ptr(ptr) this_cpu_ptr(ptr)
#define per_cpu(var, cpu) (*per_cpu_ptr(&(var), (cpu)))
#define this_cpu_read(var) (*this_cpu_ptr(&(var)))
#define __this_cpu_read(var) this_cpu_read(var)

void pvk_percpu_add(const void *proto, unsigned size, long v);

#define this_cpu_add(pcp, v) pvk_percpu_add(&(pcp), sizeof(pcp), (long)(v))
#define raw_cpu_add(pcp, v) this_cpu_add(pcp, v)
#define __this_cpu_add(pcp, v) this_cpu_add(pcp, v)
#define this_cpu_inc(pcp) this_cpu_add(pcp, 1)
#define raw_cpu_inc(pcp) this_cpu_add(pcp, 1)
#define __this_cpu_inc(pcp) this_cpu_add(pcp, 1)
#define this_cpu_dec(pcp) this_cpu_add(pcp, -1)
#define raw_cpu_dec(pcp) this_cpu_add(pcp, -1)
#define __this_cpu_dec(pcp) this_cpu_add(pcp, -1)

#endif
