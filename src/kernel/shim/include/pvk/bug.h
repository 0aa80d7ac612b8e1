/* SPDX-License-Identifier: GPL-2.0-only */
/* BUG() and WARN() report through the Environment (pvk_ops.bug / .warn). */
#ifndef PVK_BUG_H
#define PVK_BUG_H

#include "pvk/types.h"

void pvk_warn_fmt(const char *file, int line, const char *fmt, ...)
	__attribute__((__format__(__printf__, 3, 4)));

#define BUG()                                          \
	do {                                           \
		pvk_cur->bug(__FILE__, __LINE__);      \
		__builtin_unreachable();               \
	} while (0)
#define BUG_ON(cond)                 \
	do {                         \
		if (unlikely(cond))  \
			BUG();       \
	} while (0)
#define WARN(cond, ...)                                               \
	({                                                            \
		bool __wc = !!(cond);                                 \
		if (unlikely(__wc))                                   \
			pvk_warn_fmt(__FILE__, __LINE__, __VA_ARGS__); \
		__wc;                                                 \
	})
#define WARN_ON(cond) WARN((cond), "WARN_ON(%s)", #cond)
#define WARN_ON_ONCE(cond) WARN_ON(cond)
#define WARN_ONCE(cond, ...) WARN((cond), __VA_ARGS__)

#endif
