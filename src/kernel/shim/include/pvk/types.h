/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel base types, attributes and small helpers the locking files use. */
#ifndef PVK_TYPES_H
#define PVK_TYPES_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64; /* as the kernel's int-ll64.h */
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef long long s64;
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef int32_t __s32;
typedef int64_t __s64;

#define BITS_PER_LONG 64
#define SMP_CACHE_BYTES 64
#define L1_CACHE_BYTES 64
#define PAGE_SIZE 4096UL

#define __user
#undef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#define noinline __attribute__((__noinline__))
#define __pure __attribute__((__pure__))
#undef __attribute_const__
#define __attribute_const__ __attribute__((__const__))
#define __visible __attribute__((__externally_visible__))
#define __lockfunc
#define __init
#define __initdata
#define __read_mostly
#define __cacheline_aligned __attribute__((__aligned__(SMP_CACHE_BYTES)))
#define ____cacheline_aligned __cacheline_aligned
#define ____cacheline_aligned_in_smp __cacheline_aligned
#define __aligned(x) __attribute__((__aligned__(x)))
#define __maybe_unused __attribute__((__unused__))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define data_race(expr) (expr)
#define barrier() __asm__ __volatile__("" : : : "memory")

#define ALIGN(x, a) (((x) + ((__typeof__(x))(a) - 1)) & ~((__typeof__(x))(a) - 1))
#define DIV_ROUND_CLOSEST_ULL(x, d) ((unsigned long long)(((x) + (d) / 2) / (d)))
/* do_div(n, base): n becomes the quotient, the remainder is returned. */
#define do_div(n, base)                                  \
	({                                               \
		u32 __base = (base);                     \
		u32 __rem = (u32)((u64)(n) % __base);    \
		(n) = (u64)(n) / __base;                 \
		__rem;                                   \
	})

#define BUILD_BUG_ON(cond) _Static_assert(!(cond), "BUILD_BUG_ON(" #cond ")")

#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
/* Boot parameters are not parsed: the handler is kept (unused) so it still compiles. */
#define early_param(name, fn) static int (*const pvk_unused_##fn)(char *) __maybe_unused = fn

static inline void prefetch(const void *p) { __builtin_prefetch(p); }
static inline void prefetchw(const void *p) { __builtin_prefetch(p, 1); }

#endif
