/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/fs.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_FS_H
#define PVK_SHIM_LINUX_FS_H
#include "pvk/kernel.h"
#endif
