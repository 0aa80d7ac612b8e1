/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/percpu.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_PERCPU_H
#define PVK_SHIM_LINUX_PERCPU_H
#include "pvk/kernel.h"
#endif
