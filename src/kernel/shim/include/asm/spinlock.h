/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/spinlock.h>: SPIN_THRESHOLD lives with the rest of the x86 qspinlock glue. */
#ifndef PVK_SHIM_ASM_SPINLOCK_H
#define PVK_SHIM_ASM_SPINLOCK_H
#include <asm/qspinlock.h>
#endif
