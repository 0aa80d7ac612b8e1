/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/memblock.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_MEMBLOCK_H
#define PVK_SHIM_LINUX_MEMBLOCK_H
#include "pvk/kernel.h"
#endif
