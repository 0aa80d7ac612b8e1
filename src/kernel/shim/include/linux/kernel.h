/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/kernel.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_KERNEL_H
#define PVK_SHIM_LINUX_KERNEL_H
#include "pvk/kernel.h"
#endif
