/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/bits.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_LINUX_BITS_H
#define PVK_SHIM_LINUX_BITS_H
#include "pvk/kernel.h"
#endif
