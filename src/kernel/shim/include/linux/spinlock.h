/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/spinlock.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_SPINLOCK_H
#define PVK_SHIM_LINUX_SPINLOCK_H
#include "pvk/kernel.h"
#endif
