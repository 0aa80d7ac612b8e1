/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/hardirq.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_HARDIRQ_H
#define PVK_SHIM_LINUX_HARDIRQ_H
#include "pvk/kernel.h"
#endif
