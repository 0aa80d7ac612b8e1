/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/paravirt.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_ASM_PARAVIRT_H
#define PVK_SHIM_ASM_PARAVIRT_H
#include "pvk/kernel.h"
#endif
