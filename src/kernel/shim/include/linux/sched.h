/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/sched.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_SCHED_H
#define PVK_SHIM_LINUX_SCHED_H
#include "pvk/kernel.h"
#endif
