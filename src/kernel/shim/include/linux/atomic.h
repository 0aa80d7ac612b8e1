/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/atomic.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_ATOMIC_H
#define PVK_SHIM_LINUX_ATOMIC_H
#include "pvk/kernel.h"
#endif
