/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/export.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_EXPORT_H
#define PVK_SHIM_LINUX_EXPORT_H
#include "pvk/kernel.h"
#endif
