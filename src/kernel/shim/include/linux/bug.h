/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/bug.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_BUG_H
#define PVK_SHIM_LINUX_BUG_H
#include "pvk/kernel.h"
#endif
