/* SPDX-License-Identifier: GPL-2.0-only */
/* <asm/byteorder.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_ASM_BYTEORDER_H
#define PVK_SHIM_ASM_BYTEORDER_H
#include "pvk/kernel.h"
#define __LITTLE_ENDIAN 1234
#endif
