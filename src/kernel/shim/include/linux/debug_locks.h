/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/debug_locks.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_DEBUG_LOCKS_H
#define PVK_SHIM_LINUX_DEBUG_LOCKS_H
#include "pvk/kernel.h"
#endif
