// SPDX-License-Identifier: GPL-2.0-only
/*
 * The shim's C side: per-CPU storage geometry and arithmetic, the kernel's lock event
 * counters and their names, and the few kernel services the locking files call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pvk/kernel.h"
#include "lock_events.h"

__thread const struct pvk_ops *pvk_cur;

const int debug_locks_silent;

/* The counters lock_events.h declares (lock_events.c defines them in the kernel). */
DEFINE_PER_CPU(unsigned long, lockevents[lockevent_num]);

#undef LOCK_EVENT
#define LOCK_EVENT(name) #name,
static const char *const pvk_event_names[] = {
#include "lock_events_list.h"
};
_Static_assert(sizeof(pvk_event_names) / sizeof(pvk_event_names[0]) == lockevent_num,
	       "one name per lock event");

int pvk_lock_event_count(void) { return lockevent_num; }

const char *pvk_lock_event_name(int event)
{
	return event >= 0 && event < lockevent_num ? pvk_event_names[event] : NULL;
}

size_t pvk_percpu_size(void) { return (size_t)(__stop_pvk_percpu - __start_pvk_percpu); }

size_t pvk_percpu_align(void) { return SMP_CACHE_BYTES; }

void pvk_percpu_add(const void *proto, unsigned size, long v)
{
	void *p = pvk_percpu_ptr(proto, smp_processor_id());
	const char *c = (const char *)proto;

	switch (size) {
	case 1:
		*(u8 *)p += (u8)v;
		break;
	case 2:
		*(u16 *)p += (u16)v;
		break;
	case 4:
		*(u32 *)p += (u32)v;
		break;
	default:
		*(u64 *)p += (u64)v;
		break;
	}
	if (c >= (const char *)lockevents && c < (const char *)(lockevents + lockevent_num))
		pvk_cur->lock_event((int)((const unsigned long *)proto - lockevents), v);
}

void pvk_warn_fmt(const char *file, int line, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pvk_cur->warn(file, line, buf);
}

/*
 * mm's sizing rule for a table given its entry count: round up to a power of two, clamp
 * to [low_limit, high_limit], then take the largest power of two that fits (ilog2).
 */
void *alloc_large_system_hash(const char *tablename, unsigned long bucketsize,
			      unsigned long numentries, int scale, int flags,
			      unsigned int *hash_shift, unsigned int *hash_mask,
			      unsigned long low_limit, unsigned long high_limit)
{
	unsigned long n = 1;
	unsigned int log2qty = 0;

	(void)tablename;
	(void)scale;
	(void)flags; /* the instance's memory is always zeroed (HASH_ZERO) */
	while (n < numentries)
		n <<= 1;
	if (n < low_limit)
		n = low_limit;
	if (high_limit && n > high_limit)
		n = high_limit;
	while ((2UL << log2qty) <= n)
		log2qty++;
	if (hash_shift)
		*hash_shift = log2qty;
	if (hash_mask)
		*hash_mask = (1U << log2qty) - 1;
	return pvk_cur->vm_alloc(bucketsize << log2qty, SMP_CACHE_BYTES);
}

ssize_t simple_read_from_buffer(void __user *to, size_t count, loff_t *ppos, const void *from,
				size_t available)
{
	loff_t pos = *ppos;
	size_t n;

	if (pos < 0)
		return -22; /* -EINVAL */
	if ((size_t)pos >= available || !count)
		return 0;
	n = available - (size_t)pos;
	if (n > count)
		n = count;
	memcpy(to, (const char *)from + pos, n);
	*ppos = pos + (loff_t)n;
	return (ssize_t)n;
}
