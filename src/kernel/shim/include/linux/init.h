/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/init.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_INIT_H
#define PVK_SHIM_LINUX_INIT_H
#include "pvk/kernel.h"
#endif
