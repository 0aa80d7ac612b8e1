/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/bitops.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_BITOPS_H
#define PVK_SHIM_LINUX_BITOPS_H
#include "pvk/kernel.h"
#endif
