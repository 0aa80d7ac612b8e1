/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/prefetch.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_PREFETCH_H
#define PVK_SHIM_LINUX_PREFETCH_H
#include "pvk/kernel.h"
#endif
