/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/mcs_spinlock.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_ASM_MCS_SPINLOCK_H
#define PVK_SHIM_ASM_MCS_SPINLOCK_H
#include "pvk/kernel.h"
/* x86 has no arch_mcs_spin_lock_contended(): mcs_spinlock.h uses its generic wait. */
#endif
