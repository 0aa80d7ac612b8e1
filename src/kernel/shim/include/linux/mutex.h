/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/mutex.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_MUTEX_H
#define PVK_SHIM_LINUX_MUTEX_H
#include "pvk/kernel.h"
#endif
