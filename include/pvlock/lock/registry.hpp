// SPDX-License-Identifier: GPL-2.0-only
// Every lock pvlock offers, by name, for any world. Tools (torture, bench, the simulator's
// guest configuration) look locks up here and get back the lock *type* for their Env, so a
// lock is written once and listed once.
//
// Adding a lock: write include/pvlock/lock/<name>.hpp as a template over Env, then add one
// line to for_each_lock() below.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/busted.hpp"
#include "pvlock/lock/mcs.hpp"
#include "pvlock/lock/mutex.hpp"
#include "pvlock/lock/pv_ticket.hpp"
#include "pvlock/lock/qspinlock.hpp"
#include "pvlock/lock/raw_spinlock.hpp"
#include "pvlock/lock/rwsem.hpp"
#include "pvlock/lock/tas.hpp"
#include "pvlock/lock/ticket.hpp"

namespace pvlock {

enum class LockKind {
  spin,      // spinlock: waiters never sleep (may halt their vCPU with PV)
  sleeping,  // mutex: spin then sleep
  rw,        // reader-writer: lock()/unlock() exclusive, lock_shared()/unlock_shared()
};

struct LockInfo {
  std::string_view name;
  LockKind kind;
  std::string_view description;
  std::vector<std::string_view> knobs;  // names from knobs.hpp that change its behaviour
  bool negative_control = false;        // busted: expected to fail torture
  std::string_view kernel_version{};    // kernel:* locks: the Linux version they run
  std::string_view kernel_change{};     // kernel:<variant>/* locks: the change applied
};

}  // namespace pvlock

#ifdef PVLOCK_KERNEL_LOCKS
#include "pvlock/kernel/locks.hpp"  // the kernel:* locks (src/kernel/)
#endif

namespace pvlock {

// Calls f.template operator()<LockType>(const LockInfo&) for every lock.
template <Environment Env, class F>
void for_each_lock(F&& f) {
  f.template operator()<TasLock<Env>>(
      LockInfo{"tas",
               LockKind::spin,
               "test-and-test-and-set; the kernel's virt_spin_lock() fallback (unfair, no queue)",
               {}});
  f.template operator()<TicketLock<Env>>(LockInfo{
      "ticket", LockKind::spin, "ticket spinlock (pre-qspinlock x86 Linux); strict FIFO", {}});
  f.template operator()<PvTicketLock<Env>>(
      LockInfo{"pvticket",
               LockKind::spin,
               "paravirt ticket spinlock (KVM guests before pvqspinlock): waiters halt after a "
               "spin; the unlocker kicks the next ticket's CPU",
               {"spin_threshold"}});
  f.template operator()<McsLock<Env>>(
      LockInfo{"mcs", LockKind::spin, "MCS queue lock; local spinning, strict FIFO", {}});
  f.template operator()<QueuedSpinlock<Env>>(
      LockInfo{"qspinlock",
               LockKind::spin,
               "queued spinlock (native Linux): fast path, pending bit, MCS queue of per-CPU nodes",
               {"pending_loops", "virt_spin_lock"}});
  f.template operator()<PvQueuedSpinlock<Env>>(
      LockInfo{"pvqspinlock",
               LockKind::spin,
               "paravirt qspinlock: waiters halt after a spin and are kicked; hybrid lock stealing",
               {"spin_threshold", "prev_check_mask", "wait_early", "hybrid_stealing",
                "lock_stealing", "kick_at_unlock"}});
  f.template operator()<Mutex<Env>>(
      LockInfo{"mutex",
               LockKind::sleeping,
               "kernel mutex: OSQ-gated spinning on a running owner, FIFO sleepers, hand-off",
               {"break_on_prev_preempted", "preempt_check_period", "spin_on_owner", "mutex_handoff",
                "mutex_trylock", "wait_lock"}});
  f.template operator()<RwSem<Env>>(LockInfo{
      "rwsem",
      LockKind::rw,
      "kernel rw_semaphore: writers spin (time-limited on readers), reader stealing, hand-off",
      {"break_on_prev_preempted", "preempt_check_period", "spin_on_owner", "rwsem_handoff",
       "rwsem_handoff_set", "wait_lock", "rwsem_reader_spin"}});
#ifdef PVLOCK_KERNEL_LOCKS
  for_each_kernel_lock<Env>(f);
#endif
  f.template operator()<BustedLock<Env>>(
      LockInfo{"busted",
               LockKind::spin,
               "no exclusion at all: locktorture's lock_busted, must FAIL",
               {},
               true});
}

// Calls f.template operator()<LockType>(info) for the lock called `name`; false if none.
template <Environment Env, class F>
bool with_lock(std::string_view name, F&& f) {
  bool found = false;
  for_each_lock<Env>([&]<class L>(const LockInfo& info) {
    if (!found && info.name == name) {
      found = true;
      f.template operator()<L>(info);
    }
  });
  return found;
}

template <Environment Env>
std::vector<LockInfo> lock_infos() {
  std::vector<LockInfo> out;
  for_each_lock<Env>([&]<class L>(const LockInfo& info) { out.push_back(info); });
  return out;
}

// Why `name` is not a lock of this build: the kernel locks or the kernel variant it names
// were not built (with configure's reason), or no such lock exists.
inline std::string missing_lock_reason(std::string_view name) {
#ifdef PVLOCK_KERNEL_STATUS
  if (name.starts_with("kernel:")) return PVLOCK_KERNEL_STATUS;
#endif
#ifdef PVLOCK_KERNEL_LOCKS
  for (const kernel::NotBuilt& v : kernel::kNotBuilt)
    if (v.name != nullptr && name.starts_with("kernel:" + std::string(v.name) + "/"))
      return v.reason;
#endif
  return "no such lock in this build";
}

// Makes the external raw_spinlock_t of `p` (RawSpinlockKind::external, the spinlock named
// p.raw_spinlock_name, e.g. a kernel:* qspinlock) runnable in Env's world: fills
// p.raw_spinlock_ops with that lock's entry points for Env. Other kinds are left alone.
// Returns why not when the name is no spinlock of this build a RawSpinlock can hold.
template <Environment Env>
std::optional<std::string> resolve_raw_spinlock(LockPolicies& p) {
  if (p.raw_spinlock != RawSpinlockKind::external) {
    p.raw_spinlock_ops = nullptr;
    return std::nullopt;
  }
  const RawSpinlockOps* ops = nullptr;
  const bool found = with_lock<Env>(p.raw_spinlock_name, [&]<class L>(const LockInfo& info) {
    if constexpr (ExternalRawSpinlock<L>)
      if (info.kind == LockKind::spin && !info.negative_control) ops = &kRawSpinlockOpsOf<L>;
  });
  if (!found) return "'" + p.raw_spinlock_name + "': " + missing_lock_reason(p.raw_spinlock_name);
  if (ops == nullptr)
    return "'" + p.raw_spinlock_name + "' cannot be a raw_spinlock_t (not a spinlock with " +
           "lock, trylock and unlock)";
  p.raw_spinlock_ops = ops;
  return std::nullopt;
}

}  // namespace pvlock
