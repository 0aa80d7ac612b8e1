/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Force-included (-include) before every kernel source and every shim C file: the kernel
 * configuration the shim builds (an x86-64 SMP guest kernel with paravirt spinlocks and
 * lock event counters) and the redirection of the kernel files' own statics.
 *
 * Statics: the per-CPU variables of these files already live in the shim's per-CPU
 * section (pvk/percpu.h) and are reached per kernel instance. The two plain file statics
 * of qspinlock_paravirt.h (the PV hash table and its size) are renamed by the macros below
 * into accessor calls, so that `static T *pv_lock_hash;` declares the accessor and every
 * use reads the current kernel instance's copy (struct pvk_vm). The kernel text is not
 * touched; the build checks that the compiled kernel objects define no other writable
 * data (see src/kernel/CMakeLists.txt).
 */
#ifndef PVK_PRELUDE_H
#define PVK_PRELUDE_H

#define __KERNEL__ 1
#define CONFIG_SMP 1
#define CONFIG_64BIT 1
#define CONFIG_X86_64 1
#define CONFIG_NR_CPUS 1024
#define CONFIG_QUEUED_SPINLOCKS 1
#define CONFIG_PARAVIRT 1
#define CONFIG_PARAVIRT_SPINLOCKS 1
#define CONFIG_LOCK_EVENT_COUNTS 1
#define CONFIG_LOCK_SPIN_ON_OWNER 1

#include "pvlock/kernel/abi.h"

struct pv_hash_entry;
static inline struct pv_hash_entry **pvk_static_pv_lock_hash(void)
{
	return (struct pv_hash_entry **)&pvk_cur->vm()->pv_lock_hash;
}
static inline unsigned int *pvk_static_pv_lock_hash_bits(void)
{
	return &pvk_cur->vm()->pv_lock_hash_bits;
}
#define pv_lock_hash (*pvk_static_pv_lock_hash())
#define pv_lock_hash_bits (*pvk_static_pv_lock_hash_bits())

#endif
