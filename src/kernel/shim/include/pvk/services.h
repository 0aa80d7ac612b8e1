/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel services the locking files call outside the lock algorithm: the boot-time hash
 * allocator, the debugfs read helper of the lock event counters, tracepoints, lockdep's
 * silence flag.
 */
#ifndef PVK_SERVICES_H
#define PVK_SERVICES_H

#include "pvk/types.h"

/* mm: alloc_large_system_hash(), from the current kernel instance's memory. */
#define HASH_EARLY 0x00000001
#define HASH_ZERO 0x00000004
void *alloc_large_system_hash(const char *tablename, unsigned long bucketsize,
			      unsigned long numentries, int scale, int flags,
			      unsigned int *hash_shift, unsigned int *hash_mask,
			      unsigned long low_limit, unsigned long high_limit);

/* fs: just what lockevent_read() (the debugfs file of the counters) touches. */
struct inode {
	void *i_private;
};
struct file {
	struct inode *f_inode;
};
static inline struct inode *file_inode(const struct file *f) { return f->f_inode; }
ssize_t simple_read_from_buffer(void __user *to, size_t count, loff_t *ppos, const void *from,
				size_t available);
int snprintf(char *str, size_t size, const char *format, ...);

/* Tracepoints are compiled out. */
#define LCB_F_SPIN (1U << 0)
#define LCB_F_READ (1U << 1)
#define LCB_F_WRITE (1U << 2)
#define LCB_F_RT (1U << 3)
#define LCB_F_PERCPU (1U << 4)
#define LCB_F_MUTEX (1U << 5)
#define trace_contention_begin(lock, flags) ((void)(lock), (void)(flags))
#define trace_contention_end(lock, ret) ((void)(lock), (void)(ret))

/* lockdep */
extern const int debug_locks_silent;

#endif
