// SPDX-License-Identifier: GPL-2.0-only
// Lock policy knobs: the constants and boot parameters of kernel/locking that the seeds
// argue about, gathered in one plain struct. A world holds one LockPolicies per "kernel"
// (natively: the process; in the simulator: each guest VM), returned by Env::policies().
// Kernel constants are compile-time there; here they are runtime values so that a sweep can
// vary them without a rebuild.
#pragma once

#include <cstdint>
#include <string>

namespace pvlock {

// pv_wait_early() rule in qspinlock_paravirt.h.
enum class WaitEarlyRule : std::uint8_t {
  prev_halted,               // upstream since 89340d0935c9 (seed 000, the revert)
  prev_halted_or_preempted,  // 75437bb304b2 (2017): also leave when vcpu_is_preempted(prev)
  never,                     // no early wait: before cd0272fab785 (v4.5), or an ablation
};

struct QspinlockPolicy {
  // _Q_PENDING_LOOPS: how long the pending path re-reads a pending-only word (x86: 1 << 9).
  std::uint32_t pending_loops = 1u << 9;
  // SPIN_THRESHOLD: cpu_relax() iterations before a PV waiter halts (x86: 1 << 15).
  std::uint32_t spin_threshold = 1u << 15;
  // PV_PREV_CHECK_MASK: pv_wait_early() looks at prev every (mask + 1) iterations.
  std::uint32_t prev_check_mask = 0xff;
  WaitEarlyRule wait_early = WaitEarlyRule::prev_halted;
  // pv_queued_spin_steal_lock (1c4941fd53af, v4.5): a waiter entering the PV slow path may
  // take the lock past the queue. Off, the 4.2-4.4 lock: only a completely free word is
  // taken, the queue is strictly FIFO and the head does not set the pending bit.
  bool lock_stealing = true;
  // pv_hybrid_queued_unfair_trylock (11752adb, v4.8): steal while the queue head is not
  // spinning, instead of 1c4941fd's single attempt. Only with lock_stealing.
  bool hybrid_stealing = true;
  // vcpu_hashed (75d2270280686, "Only kick CPU at unlock time"): the owner that passes the
  // MCS lock to a halted successor hashes the lock for it, so that only the unlock kicks it.
  // Off, the 4.2 lock: pv_kick_node() kicks the successor at once, which then spins (and may
  // halt and be kicked again) as the queue head.
  bool kick_at_unlock = true;
  // virt_spin_lock_key: the native slow path becomes test-and-set (seed 002's novirtspin
  // turns this off). Only consulted by the native (non-PV) qspinlock.
  bool virt_spin_lock = false;
};

struct OsqPolicy {
  // Seed 003: leave the OSQ when the predecessor's vCPU is preempted
  // (vcpu_is_preempted(node_cpu(node->prev))). need_resched() always ends the spin.
  bool break_on_prev_preempted = true;
};

struct OwnerSpinPolicy {
  // How often mutex_spin_on_owner / rwsem_spin_on_owner consult vcpu_is_preempted(owner cpu):
  // 1 = every iteration (upstream), 256 = seed 004's rejected "once every 256 iterations",
  // 0 = never (kernels before v4.9 had no vcpu_is_preempted; seed 003 measured that state).
  std::uint32_t preempt_check_period = 1;
  // Mutex/rwsem optimistic spinning at all (CONFIG_MUTEX_SPIN_ON_OWNER /
  // CONFIG_RWSEM_SPIN_ON_OWNER).
  bool spin_on_owner = true;
};

// How a woken first mutex waiter asks for the hand-off (with HandoffPolicy::mutex on).
enum class MutexTrylock : std::uint8_t {
  // v4.10-5.14, __mutex_trylock_or_owner(): the waiter that finds itself first after its
  // first wake-up ORs HANDOFF into the word once, then tries; a trylock that finds the lock
  // free takes it and drops HANDOFF. The flag can land on a free lock and be stolen with it,
  // and the waiter (whose `first` stays set) never raises it again.
  or_owner,
  // v5.15+, __mutex_trylock_common() (048661a1f963, ad90880dc962): every retry of the first
  // waiter either takes the lock or sets HANDOFF in the same cmpxchg, so HANDOFF is only
  // ever set on a held lock and is re-raised after each wake-up.
  common,
};

// Whose HANDOFF an rwsem's RWSEM_FLAG_HANDOFF is (with HandoffPolicy::rwsem on): which
// waiter gets handoff_set, and whom the bit stops.
enum class RwsemHandoffSet : std::uint8_t {
  // Before 6eebd5fb2083 (v5.19): only writers carry handoff_set -- the one that sets the
  // bit, or the first waiter when it finds the bit set -- and every HANDOFF bit stops every
  // writer that is not first. A first reader that times out sets the bit and nothing more.
  setter,
  // v5.19+ (6eebd5fb2083; as the 6.1.y tree has it): the bit belongs to the first waiter,
  // reader or writer: a timed-out first reader is marked whenever it is found timed out, a
  // writer that sets the bit marks the first waiter, and a writer that is not first yields
  // only to a marked first waiter.
  first_waiter,
};

// Lock hand-off to a starving sleeper: which kernel era the sleeping locks follow. Seeds 003
// (2016) and 004 (2017) measured guests from before these commits, where a woken waiter
// only re-tries and running spinners may always steal.
struct HandoffPolicy {
  // 9d659ae14b54 (v4.10, "locking/mutex: Add lock handoff to avoid starvation"): a woken
  // first waiter that loses sets MUTEX_FLAG_HANDOFF and spins on the owner outside the OSQ.
  bool mutex = true;
  MutexTrylock mutex_trylock = MutexTrylock::common;
  // 4f23dbc1e657 (v5.3, "locking/rwsem: Implement lock handoff to prevent lock
  // starvation"): a waiter older than RWSEM_WAIT_TIMEOUT sets RWSEM_FLAG_HANDOFF, which
  // stops stealing, and then spins on the owner.
  bool rwsem = true;
  RwsemHandoffSet rwsem_handoff_set = RwsemHandoffSet::first_waiter;
};

// Which spinlock implements this kernel's raw_spinlock_t, as the wait_lock of the mutex and
// the rwsem. A kernel picks it once at boot (native_pv_lock_init / kvm_spinlock_init): the
// native qspinlock, the PV one when the host can unhalt, test-and-set under virt_spin_lock.
// `automatic` is that choice: the simulator's runner resolves it per guest (harness/run.cpp);
// a RawSpinlock built with it unresolved takes its world's boot choice
// (env_boot_raw_spinlock: the PV qspinlock on native threads, bare metal's native qspinlock
// in a world without one). ticket and
// mcs stand for kernels configured with those spinlocks. The PV and virt_spin_lock knobs
// apply to the wait_lock as to every other spinlock of the kernel. `external` is a spinlock
// this library does not hold itself -- the kernel's own qspinlock.c run through the shim --
// named by raw_spinlock_name and reached through raw_spinlock_ops, which the tool that
// builds the world fills from the lock registry for its Env (resolve_raw_spinlock()).
enum class RawSpinlockKind : std::uint8_t {
  automatic,
  tas,
  ticket,
  mcs,
  qspinlock,
  pvqspinlock,
  external
};

// Its name, as the lock registry spells that spinlock.
inline constexpr const char* raw_spinlock_kind_name(RawSpinlockKind k) {
  switch (k) {
    case RawSpinlockKind::automatic:
      return "auto";
    case RawSpinlockKind::tas:
      return "tas";
    case RawSpinlockKind::ticket:
      return "ticket";
    case RawSpinlockKind::mcs:
      return "mcs";
    case RawSpinlockKind::qspinlock:
      return "qspinlock";
    case RawSpinlockKind::pvqspinlock:
      return "pvqspinlock";
    case RawSpinlockKind::external:
      return "external";
  }
  return "?";
}

// The rwsem's era beyond its hand-off (docs/eras.md).
struct RwsemPolicy {
  // v5.3-v5.10: readers spin optimistically too, on the OSQ, and the owner word has one
  // nonspinnable bit per side (RWSEM_RD_NONSPINNABLE, RWSEM_WR_NONSPINNABLE). From
  // cf69482d62d9 ("locking/rwsem: Enable readers spinning on writer", v5.3) to
  // 617f3ef95177 ("locking/rwsem: Remove reader optimistic spinning", v5.11), which
  // replaced it with reader lock stealing. False: the v5.11+ rwsem.
  bool reader_spin = false;
};
// The entry points of an external raw_spinlock_t (raw_spinlock.hpp).
struct RawSpinlockOps;

struct LockPolicies {
  QspinlockPolicy qspinlock;
  OsqPolicy osq;
  OwnerSpinPolicy owner_spin;
  HandoffPolicy handoff;
  RawSpinlockKind raw_spinlock = RawSpinlockKind::automatic;
  RwsemPolicy rwsem;
  // RawSpinlockKind::external: the registry name of the spinlock (e.g. "kernel:pvqspinlock")
  // and, once resolved for the world's Env, its entry points.
  std::string raw_spinlock_name;
  const RawSpinlockOps* raw_spinlock_ops = nullptr;
};

}  // namespace pvlock
