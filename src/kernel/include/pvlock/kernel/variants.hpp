// SPDX-License-Identifier: GPL-2.0-only
// The builds of the kernel files a binary carries: the stock one and every variant
// (src/kernel/variants.cmake) -- the same files with a change applied, compiled again, whose
// global symbols carry the prefix pvkv_<identifier>_ (src/kernel/rename_symbols.cmake). A
// build is a type with the entry points of its objects, so a lock, its pvk_ops table and its
// kernel instance are chosen per build at compile time.
#pragma once

#include <tuple>

#include "pvlock/kernel/abi.h"
#include "pvlock/kernel/variant_list.h"  // generated: PVLOCK_KERNEL_VARIANT_LIST

// The prefixed entry points of one variant's objects (the names of abi.h's, prefixed).
#define PVLOCK_KERNEL_DECLARE_ENTRIES(id)              \
  void pvkv_##id##_pvk_native_spin_lock(void* lock);   \
  void pvkv_##id##_pvk_native_spin_unlock(void* lock); \
  void pvkv_##id##_pvk_pv_spin_lock(void* lock);       \
  void pvkv_##id##_pvk_pv_spin_unlock(void* lock);     \
  int pvkv_##id##_pvk_spin_trylock(void* lock);        \
  void pvkv_##id##_pvk_pv_init_lock_hash(void);        \
  int pvkv_##id##_pvk_osq_lock(void* lock);            \
  void pvkv_##id##_pvk_osq_unlock(void* lock);

extern "C" {
#define PVLOCK_KERNEL_X(id, name, change) PVLOCK_KERNEL_DECLARE_ENTRIES(id)
PVLOCK_KERNEL_VARIANT_LIST(PVLOCK_KERNEL_X)
#undef PVLOCK_KERNEL_X
}

namespace pvlock::kernel {

// The kernel files as the tree has them.
struct Stock {
  static constexpr const char* kQspinlock = "kernel:qspinlock";
  static constexpr const char* kPvqspinlock = "kernel:pvqspinlock";
  static constexpr const char* kOsq = "kernel:osq";
  static constexpr const char* kChange = "";  // none
  static void native_lock(void* l) { pvk_native_spin_lock(l); }
  static void native_unlock(void* l) { pvk_native_spin_unlock(l); }
  static void pv_lock(void* l) { pvk_pv_spin_lock(l); }
  static void pv_unlock(void* l) { pvk_pv_spin_unlock(l); }
  static int trylock(void* l) { return pvk_spin_trylock(l); }
  static void pv_init_lock_hash() { pvk_pv_init_lock_hash(); }
  static int osq_lock(void* l) { return pvk_osq_lock(l); }
  static void osq_unlock(void* l) { pvk_osq_unlock(l); }
};

#define PVLOCK_KERNEL_X(id, name, change)                                         \
  struct Variant_##id {                                                           \
    static constexpr const char* kQspinlock = "kernel:" name "/qspinlock";        \
    static constexpr const char* kPvqspinlock = "kernel:" name "/pvqspinlock";    \
    static constexpr const char* kOsq = "kernel:" name "/osq";                    \
    static constexpr const char* kChange = change;                                \
    static void native_lock(void* l) { pvkv_##id##_pvk_native_spin_lock(l); }     \
    static void native_unlock(void* l) { pvkv_##id##_pvk_native_spin_unlock(l); } \
    static void pv_lock(void* l) { pvkv_##id##_pvk_pv_spin_lock(l); }             \
    static void pv_unlock(void* l) { pvkv_##id##_pvk_pv_spin_unlock(l); }         \
    static int trylock(void* l) { return pvkv_##id##_pvk_spin_trylock(l); }       \
    static void pv_init_lock_hash() { pvkv_##id##_pvk_pv_init_lock_hash(); }      \
    static int osq_lock(void* l) { return pvkv_##id##_pvk_osq_lock(l); }          \
    static void osq_unlock(void* l) { pvkv_##id##_pvk_osq_unlock(l); }            \
  };
PVLOCK_KERNEL_VARIANT_LIST(PVLOCK_KERNEL_X)
#undef PVLOCK_KERNEL_X

// Whether build B is the tree's files as they are.
template <class B>
inline constexpr bool is_stock = B::kChange[0] == '\0';

// Every build, the stock one first.
#define PVLOCK_KERNEL_X(id, name, change) , Variant_##id
using Builds = std::tuple<Stock PVLOCK_KERNEL_VARIANT_LIST(PVLOCK_KERNEL_X)>;
#undef PVLOCK_KERNEL_X

// The variants asked for at configure time that were left out, with the reason.
struct NotBuilt {
  const char* name;
  const char* reason;
};
#define PVLOCK_KERNEL_X(name, reason) NotBuilt{name, reason},
inline constexpr NotBuilt kNotBuilt[] = {PVLOCK_KERNEL_VARIANTS_NOT_BUILT(PVLOCK_KERNEL_X)
                                             NotBuilt{nullptr, nullptr}};
#undef PVLOCK_KERNEL_X

}  // namespace pvlock::kernel
