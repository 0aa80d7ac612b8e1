/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * <asm/qspinlock.h> for an x86-64 paravirt guest: the lock word's layout comes from the
 * kernel tree's own asm-generic/qspinlock_types.h; what x86 adds is written here.
 *   - _Q_PENDING_LOOPS: x86 waits up to 512 iterations for a pending -> locked hand-over.
 *   - SPIN_THRESHOLD (asm/spinlock.h): the PV spin before halting, 1 << 15 iterations.
 *   - virt_spin_lock(): the test-and-set fallback is off, as in a guest with PV spinlocks
 *     or on bare metal (the virt_spin_lock_key is disabled).
 *   - queued_fetch_set_pending_acquire() is not overridden: x86 sets the pending bit with
 *     `lock bts` and re-reads the word, which orders and returns the same as the generic
 *     atomic_fetch_or_acquire() qspinlock.c falls back to.
 * The generic fast paths (asm-generic/qspinlock.h) are in shim/src/entry.c.
 */
#ifndef PVK_SHIM_ASM_QSPINLOCK_H
#define PVK_SHIM_ASM_QSPINLOCK_H

#include "pvk/kernel.h"
#include <asm-generic/qspinlock_types.h>

#define _Q_PENDING_LOOPS (1 << 9)
#define SPIN_THRESHOLD (1 << 15)

static inline bool virt_spin_lock(struct qspinlock *lock)
{
	(void)lock;
	return false;
}

/* queued_spin_trylock(): only a completely free word is taken. */
static __always_inline int queued_spin_trylock(struct qspinlock *lock)
{
	int val = atomic_read(&lock->val);

	if (unlikely(val))
		return 0;
	return likely(atomic_try_cmpxchg_acquire(&lock->val, &val, _Q_LOCKED_VAL));
}

void native_queued_spin_lock_slowpath(struct qspinlock *lock, u32 val);
void __pv_init_lock_hash(void);
void __pv_queued_spin_lock_slowpath(struct qspinlock *lock, u32 val);
void __pv_queued_spin_unlock(struct qspinlock *lock);
void __pv_queued_spin_unlock_slowpath(struct qspinlock *lock, u8 locked);

#endif
