/* SPDX-License-Identifier: GPL-2.0-only */
/* CPUs, the scheduler and the hypervisor as the locking files see them. */
#ifndef PVK_SCHED_H
#define PVK_SCHED_H

#include "pvk/types.h"

#define smp_processor_id() (pvk_cur->cpu())
#define raw_smp_processor_id() smp_processor_id()
#define num_possible_cpus() (pvk_cur->nr_cpus())
#define nr_cpu_ids num_possible_cpus()
#define for_each_possible_cpu(cpu) for ((cpu) = 0; (cpu) < num_possible_cpus(); (cpu)++)

static inline bool need_resched(void) { return pvk_cur->need_resched() != 0; }

/* Steal-time "preempted" flag of another vCPU (false on bare metal). */
static inline bool vcpu_is_preempted(long cpu) { return pvk_cur->vcpu_is_preempted((int)cpu) != 0; }

/* kvm_wait() / kvm_kick_cpu(), the hypervisor's pv_ops.lock.wait / .kick. */
static inline void pv_wait(u8 *ptr, u8 val) { pvk_cur->halt(ptr, val); }
static inline void pv_kick(int cpu) { pvk_cur->kick(cpu); }

static inline u64 sched_clock(void) { return pvk_cur->sched_clock(); }
static inline u64 local_clock(void) { return sched_clock(); }

#endif
