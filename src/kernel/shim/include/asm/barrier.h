/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/barrier.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_ASM_BARRIER_H
#define PVK_SHIM_ASM_BARRIER_H
#include "pvk/kernel.h"
#endif
