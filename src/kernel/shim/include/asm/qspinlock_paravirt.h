/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/qspinlock_paravirt.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_ASM_QSPINLOCK_PARAVIRT_H
#define PVK_SHIM_ASM_QSPINLOCK_PARAVIRT_H
#include "pvk/kernel.h"
/* No x86 assembly __pv_queued_spin_unlock: qspinlock_paravirt.h builds its C version,
 * which the x86-64 assembly implements instruction for instruction. */
#endif
