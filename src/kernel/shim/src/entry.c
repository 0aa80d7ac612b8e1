// SPDX-License-Identifier: GPL-2.0-only
/*
 * The entry points pvlock calls: the generic spin_lock()/spin_unlock()/spin_trylock() fast
 * paths (what asm-generic/qspinlock.h and x86's paravirt unlock do) around the kernel's
 * slow paths, and the kernel's OSQ.
 */
#include "pvk/kernel.h"
#include <asm/qspinlock.h>
#include <linux/osq_lock.h>

/* queued_spin_lock(): one cmpxchg 0 -> locked, else the slow path with the value seen. */
static __always_inline void pvk_fast_lock(struct qspinlock *lock, bool pv)
{
	int val = 0;

	if (likely(atomic_try_cmpxchg_acquire(&lock->val, &val, _Q_LOCKED_VAL)))
		return;
	if (pv)
		__pv_queued_spin_lock_slowpath(lock, (u32)val);
	else
		native_queued_spin_lock_slowpath(lock, (u32)val);
}

void pvk_native_spin_lock(void *lock) { pvk_fast_lock(lock, false); }

/* queued_spin_unlock(): release the locked byte. */
void pvk_native_spin_unlock(void *lock)
{
	smp_store_release(&((struct qspinlock *)lock)->locked, 0);
}

void pvk_pv_spin_lock(void *lock) { pvk_fast_lock(lock, true); }

void pvk_pv_spin_unlock(void *lock) { __pv_queued_spin_unlock(lock); }

int pvk_spin_trylock(void *lock) { return queued_spin_trylock(lock); }

void pvk_pv_init_lock_hash(void) { __pv_init_lock_hash(); }

int pvk_osq_lock(void *lock) { return osq_lock(lock); }

void pvk_osq_unlock(void *lock) { osq_unlock(lock); }
