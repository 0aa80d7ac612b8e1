/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/cmpxchg.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_ASM_CMPXCHG_H
#define PVK_SHIM_ASM_CMPXCHG_H
#include "pvk/kernel.h"
#endif
