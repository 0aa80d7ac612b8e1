/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/compiler.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_COMPILER_H
#define PVK_SHIM_LINUX_COMPILER_H
#include "pvk/kernel.h"
#endif
