/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/smp.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_SMP_H
#define PVK_SHIM_LINUX_SMP_H
#include "pvk/kernel.h"
#endif
