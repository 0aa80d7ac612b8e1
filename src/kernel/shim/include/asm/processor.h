/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/processor.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_ASM_PROCESSOR_H
#define PVK_SHIM_ASM_PROCESSOR_H
#include "pvk/kernel.h"
#endif
