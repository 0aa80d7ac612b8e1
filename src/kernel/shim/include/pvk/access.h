/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared-memory access, as the kernel spells it, onto the pvk_ops table: READ_ONCE /
 * WRITE_ONCE, smp_load_acquire / smp_store_release, the xchg / cmpxchg / try_cmpxchg
 * families with their _relaxed/_acquire/_release variants, atomic_t, barriers,
 * smp_cond_load_*() and cpu_relax(). Each access is one call, so the simulator sees (and
 * charges) every one; natively each is one __atomic operation.
 */
#ifndef PVK_ACCESS_H
#define PVK_ACCESS_H

#include "pvk/types.h"

/* Any scalar (integer or pointer) to the zero-extended transport word and back. */
#define __pvk_u(x) ((uint64_t)(uintptr_t)(x))
#define __pvk_t(ptr, w) ({ (__typeof__(*(ptr)))(w); })

#define __pvk_load(p, o) __pvk_t(p, pvk_cur->load((p), sizeof(*(p)), (o)))
#define __pvk_store(p, v, o) pvk_cur->store((p), sizeof(*(p)), __pvk_u(v), (o))

#define READ_ONCE(x) __pvk_load(&(x), PVK_RELAXED)
#define WRITE_ONCE(x, val) __pvk_store(&(x), (val), PVK_RELAXED)
#define smp_load_acquire(p) __pvk_load((p), PVK_ACQUIRE)
#define smp_store_release(p, v) __pvk_store((p), (v), PVK_RELEASE)

/* ---- xchg / cmpxchg ------------------------------------------------------------------ */
#define __pvk_xchg(p, v, o) __pvk_t(p, pvk_cur->exchange((p), sizeof(*(p)), __pvk_u(v), (o)))
#define xchg(p, v) __pvk_xchg((p), (v), PVK_FULL)
#define xchg_relaxed(p, v) __pvk_xchg((p), (v), PVK_RELAXED)
#define xchg_acquire(p, v) __pvk_xchg((p), (v), PVK_ACQUIRE)
#define xchg_release(p, v) __pvk_xchg((p), (v), PVK_RELEASE)

#define __pvk_cmpxchg(p, o, n, mo) \
	__pvk_t(p, pvk_cur->compare_exchange((p), sizeof(*(p)), __pvk_u((__typeof__(*(p)))(o)), __pvk_u(n), (mo)))
#define cmpxchg(p, o, n) __pvk_cmpxchg((p), (o), (n), PVK_FULL)
#define cmpxchg_relaxed(p, o, n) __pvk_cmpxchg((p), (o), (n), PVK_RELAXED)
#define cmpxchg_acquire(p, o, n) __pvk_cmpxchg((p), (o), (n), PVK_ACQUIRE)
#define cmpxchg_release(p, o, n) __pvk_cmpxchg((p), (o), (n), PVK_RELEASE)

/* try_cmpxchg(): true if *p was *oldp (and is now n); else *oldp receives what was found. */
#define __pvk_try_cmpxchg(p, oldp, n, mo)                                \
	({                                                               \
		__typeof__(p) __tp = (p);                                \
		__typeof__(oldp) __to = (oldp);                          \
		__typeof__(*__tp) __te = (__typeof__(*__tp))*__to;       \
		__typeof__(*__tp) __tr = __pvk_cmpxchg(__tp, __te, (n), (mo)); \
		bool __tok = __tr == __te;                               \
		if (!__tok)                                              \
			*__to = __tr;                                    \
		__tok;                                                   \
	})
#define try_cmpxchg(p, o, n) __pvk_try_cmpxchg((p), (o), (n), PVK_FULL)
#define try_cmpxchg_relaxed(p, o, n) __pvk_try_cmpxchg((p), (o), (n), PVK_RELAXED)
#define try_cmpxchg_acquire(p, o, n) __pvk_try_cmpxchg((p), (o), (n), PVK_ACQUIRE)
#define try_cmpxchg_release(p, o, n) __pvk_try_cmpxchg((p), (o), (n), PVK_RELEASE)

/* ---- barriers (x86-64 semantics: smp_store_mb() is an xchg) ------------------------- */
#define smp_mb() pvk_cur->fence(PVK_MB)
#define smp_rmb() pvk_cur->fence(PVK_RMB)
#define smp_wmb() pvk_cur->fence(PVK_WMB)
#define smp_mb__before_atomic() barrier()
#define smp_mb__after_atomic() barrier()
#define smp_acquire__after_ctrl_dep() smp_rmb()
#define smp_store_mb(var, value) ((void)xchg(&(var), (value)))

/* ---- cpu_relax() and condition waits ------------------------------------------------ */
static inline void cpu_relax(void) { pvk_cur->cpu_relax(); }

/* The type of a scalar without its qualifiers (VAL of a const pointer is assignable). */
#define __pvk_unqual(x)                                                                    \
	__typeof__(_Generic((x), char: (char)0, signed char: (signed char)0,               \
			    unsigned char: (unsigned char)0, short: (short)0,              \
			    unsigned short: (unsigned short)0, int: (int)0,                \
			    unsigned int: (unsigned int)0, long: (long)0,                  \
			    unsigned long: (unsigned long)0, long long: (long long)0,      \
			    unsigned long long: (unsigned long long)0, _Bool: (_Bool)0,    \
			    default: (x)))

#define smp_cond_load_relaxed(ptr, cond_expr)                 \
	({                                                    \
		__typeof__(ptr) __PTR = (ptr);                \
		__pvk_unqual(*__PTR) VAL;                     \
		for (;;) {                                    \
			VAL = READ_ONCE(*__PTR);              \
			if (cond_expr)                        \
				break;                        \
			cpu_relax();                          \
		}                                             \
		VAL;                                          \
	})
#define smp_cond_load_acquire(ptr, cond_expr)                              \
	({                                                                 \
		__pvk_unqual(*(ptr)) __cval = smp_cond_load_relaxed(ptr, cond_expr); \
		smp_acquire__after_ctrl_dep();                             \
		__cval;                                                    \
	})

/* ---- atomic_t ------------------------------------------------------------------------ */
typedef struct {
	int counter;
} atomic_t;
#define ATOMIC_INIT(i) { (i) }

#define atomic_read(v) READ_ONCE((v)->counter)
#define atomic_set(v, i) WRITE_ONCE((v)->counter, (i))
#define atomic_read_acquire(v) smp_load_acquire(&(v)->counter)
#define atomic_set_release(v, i) smp_store_release(&(v)->counter, (i))

#define __pvk_arith(op, v, i, o) ((int)pvk_cur->op(&(v)->counter, 4, __pvk_u((u32)(i)), (o)))
#define atomic_fetch_add(i, v) __pvk_arith(fetch_add, (v), (i), PVK_FULL)
#define atomic_fetch_add_relaxed(i, v) __pvk_arith(fetch_add, (v), (i), PVK_RELAXED)
#define atomic_fetch_add_acquire(i, v) __pvk_arith(fetch_add, (v), (i), PVK_ACQUIRE)
#define atomic_fetch_add_release(i, v) __pvk_arith(fetch_add, (v), (i), PVK_RELEASE)
#define atomic_fetch_or(i, v) __pvk_arith(fetch_or, (v), (i), PVK_FULL)
#define atomic_fetch_or_relaxed(i, v) __pvk_arith(fetch_or, (v), (i), PVK_RELAXED)
#define atomic_fetch_or_acquire(i, v) __pvk_arith(fetch_or, (v), (i), PVK_ACQUIRE)
#define atomic_fetch_or_release(i, v) __pvk_arith(fetch_or, (v), (i), PVK_RELEASE)
#define atomic_fetch_and(i, v) __pvk_arith(fetch_and, (v), (i), PVK_FULL)
#define atomic_fetch_andnot(i, v) __pvk_arith(fetch_and, (v), ~(u32)(i), PVK_FULL)
#define atomic_fetch_andnot_relaxed(i, v) __pvk_arith(fetch_and, (v), ~(u32)(i), PVK_RELAXED)
#define atomic_fetch_andnot_acquire(i, v) __pvk_arith(fetch_and, (v), ~(u32)(i), PVK_ACQUIRE)
#define atomic_fetch_andnot_release(i, v) __pvk_arith(fetch_and, (v), ~(u32)(i), PVK_RELEASE)
#define atomic_add_return(i, v) (atomic_fetch_add((i), (v)) + (int)(i))
#define atomic_sub_return(i, v) (atomic_fetch_add(-(int)(i), (v)) - (int)(i))
/* The value-less RMWs are unordered in the kernel's memory model. */
#define atomic_add(i, v) ((void)__pvk_arith(fetch_add, (v), (i), PVK_RELAXED))
#define atomic_sub(i, v) ((void)__pvk_arith(fetch_add, (v), -(int)(i), PVK_RELAXED))
#define atomic_inc(v) atomic_add(1, (v))
#define atomic_dec(v) atomic_sub(1, (v))
#define atomic_or(i, v) ((void)__pvk_arith(fetch_or, (v), (i), PVK_RELAXED))
#define atomic_and(i, v) ((void)__pvk_arith(fetch_and, (v), (i), PVK_RELAXED))
#define atomic_andnot(i, v) ((void)__pvk_arith(fetch_and, (v), ~(u32)(i), PVK_RELAXED))

#define atomic_xchg(v, n) xchg(&(v)->counter, (n))
#define atomic_xchg_relaxed(v, n) xchg_relaxed(&(v)->counter, (n))
#define atomic_xchg_acquire(v, n) xchg_acquire(&(v)->counter, (n))
#define atomic_xchg_release(v, n) xchg_release(&(v)->counter, (n))
#define atomic_cmpxchg(v, o, n) cmpxchg(&(v)->counter, (o), (n))
#define atomic_cmpxchg_relaxed(v, o, n) cmpxchg_relaxed(&(v)->counter, (o), (n))
#define atomic_cmpxchg_acquire(v, o, n) cmpxchg_acquire(&(v)->counter, (o), (n))
#define atomic_cmpxchg_release(v, o, n) cmpxchg_release(&(v)->counter, (o), (n))
#define atomic_try_cmpxchg(v, po, n) try_cmpxchg(&(v)->counter, (po), (n))
#define atomic_try_cmpxchg_relaxed(v, po, n) try_cmpxchg_relaxed(&(v)->counter, (po), (n))
#define atomic_try_cmpxchg_acquire(v, po, n) try_cmpxchg_acquire(&(v)->counter, (po), (n))
#define atomic_try_cmpxchg_release(v, po, n) try_cmpxchg_release(&(v)->counter, (po), (n))

#define atomic_cond_read_relaxed(v, c) smp_cond_load_relaxed(&(v)->counter, (c))
#define atomic_cond_read_acquire(v, c) smp_cond_load_acquire(&(v)->counter, (c))

#endif
