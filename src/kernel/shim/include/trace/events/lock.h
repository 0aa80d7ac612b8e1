/* SPDX-License-Identifier: GPL-2.0-only */
/* <trace/events/lock.h>: see pvk/kernel.h. */
#ifndef PVK_SHIM_TRACE_EVENTS_LOCK_H
#define PVK_SHIM_TRACE_EVENTS_LOCK_H
#include "pvk/kernel.h"
#endif
