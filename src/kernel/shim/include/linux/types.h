/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/types.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_TYPES_H
#define PVK_SHIM_LINUX_TYPES_H
#include "pvk/kernel.h"
#endif
