/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/cache.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_CACHE_H
#define PVK_SHIM_LINUX_CACHE_H
#include "pvk/kernel.h"
#endif
