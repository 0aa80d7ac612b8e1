/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/atomic.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_ASM_ATOMIC_H
#define PVK_SHIM_ASM_ATOMIC_H
#include "pvk/kernel.h"
#endif
