/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/cpumask.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_CPUMASK_H
#define PVK_SHIM_LINUX_CPUMASK_H
#include "pvk/kernel.h"
#endif
