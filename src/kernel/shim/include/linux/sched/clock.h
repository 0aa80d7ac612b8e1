/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/sched/clock.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_SCHED_CLOCK_H
#define PVK_SHIM_LINUX_SCHED_CLOCK_H
#include "pvk/kernel.h"
#endif
