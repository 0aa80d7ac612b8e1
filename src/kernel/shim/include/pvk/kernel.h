/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Everything the shim offers. Each of the shim's linux/, asm/ and trace/ headers
 * includes this one: the locking files of different kernel versions include different
 * headers for the same primitives, and which header a primitive lives in does not matter.
 */
#ifndef PVK_KERNEL_H
#define PVK_KERNEL_H

#include "pvk/access.h"
#include "pvk/bug.h"
#include "pvk/percpu.h"
#include "pvk/sched.h"
#include "pvk/services.h"
#include "pvk/types.h"

#endif
