// SPDX-License-Identifier: GPL-2.0-only
// raw_spinlock_t: the spinlock a kernel was built and booted with, as one type. The mutex
// and the rwsem guard their wait lists with one (wait_lock), and which algorithm it is
// depends on the kernel, not on the sleeping lock: a PV_UNHALT guest runs the PV qspinlock
// (its waiters halt in pv_wait and are kicked), a guest of a host without PV unhalt the
// native qspinlock under virt_spin_lock (test-and-set), bare metal the native qspinlock.
//
// The kind is fixed at construction from Env::policies().raw_spinlock (the kernel's choice
// at boot, native_pv_lock_init / kvm_spinlock_init; unresolved, the world's own boot choice,
// env_boot_raw_spinlock(): the PV qspinlock on native threads, else bare metal's native
// qspinlock) and the lock is held in place, in a
// union tagged by that kind: lock() and unlock() are one switch, no virtual call and no
// allocation. The held lock's own spin sites and counters are the ones the profile and the
// lock events see (queued_spin_lock_slowpath, pv_wait_node, virt_spin_lock, ...).
//
// A kernel may also run a spinlock this library does not hold (RawSpinlockKind::external):
// the kernel's own qspinlock.c behind the shim, which lives in a target of its own built
// only when a kernel source is found. Such a lock is held in the same place, constructed
// and driven through its RawSpinlockOps (its entry points, filled by the lock registry for
// one Env), so the library needs no knowledge of it and the other kinds keep their switch.
//
// The _irq and _irqsave forms disable interrupts before taking the lock and enable (or
// restore) them after releasing it, as raw_spin_lock_irq() / raw_spin_lock_irqsave() do.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/mcs.hpp"
#include "pvlock/lock/policy.hpp"
#include "pvlock/lock/qspinlock.hpp"
#include "pvlock/lock/tas.hpp"
#include "pvlock/lock/ticket.hpp"
#include "pvlock/stat/lock_stat.hpp"

namespace pvlock {

// An external spinlock's entry points, each taking the lock's storage.
struct RawSpinlockOps {
  const char* name;
  void (*construct)(void*);
  void (*lock)(void*);
  bool (*try_lock)(void*);
  void (*unlock)(void*);
  bool (*is_locked)(void*);
};

// The storage an external spinlock has in a RawSpinlock: the room the held locks already
// take (a pointer-sized MCS tail), so that no sleeping lock's layout -- and no simulated
// cache-line placement -- changes with it.
inline constexpr std::size_t kRawSpinlockExternalBytes = 8;

// A spinlock type (one Env's instantiation) RawSpinlock can hold externally: it fits and
// needs no destructor (a sleeping lock may outlive the set-up that resolved the ops).
template <class L>
concept ExternalRawSpinlock =
    sizeof(L) <= kRawSpinlockExternalBytes &&
    alignof(L) <= alignof(void*) && std::is_trivially_destructible_v<L>&& requires(L l) {
  l.lock();
  { l.try_lock() } -> std::convertible_to<bool>;
  l.unlock();
  { l.is_locked() } -> std::convertible_to<bool>;
};

// The entry points of such a spinlock type, for RawSpinlock.
template <ExternalRawSpinlock L>
inline constexpr RawSpinlockOps kRawSpinlockOpsOf{
    L::kName,
    [](void* p) { ::new (p) L(); },
    [](void* p) { static_cast<L*>(p)->lock(); },
    [](void* p) { return static_cast<L*>(p)->try_lock(); },
    [](void* p) { static_cast<L*>(p)->unlock(); },
    [](void* p) { return static_cast<L*>(p)->is_locked(); },
};

template <Environment Env>
class RawSpinlock {
 public:
  static constexpr const char* kName = "raw_spinlock";

  RawSpinlock() : RawSpinlock(Env::policies().raw_spinlock) {}
  // RawSpinlockKind::external takes its entry points from Env::policies().raw_spinlock_ops,
  // here and on every call: the kernel that built the lock is the one that runs it, and the
  // lock's layout stays that of the held kinds (no pointer of its own).
  explicit RawSpinlock(RawSpinlockKind kind)
      : kind_(kind == RawSpinlockKind::automatic ? env_boot_raw_spinlock<Env>() : kind) {
    if (kind_ == RawSpinlockKind::external) {
      // An unresolved name is an error the tool reports where it builds the world; here it
      // would mean running no lock at all.
      if (Env::policies().raw_spinlock_ops == nullptr)
        throw std::logic_error("external raw_spinlock_t '" + Env::policies().raw_spinlock_name +
                               "' has no entry points (not resolved for this world)");
      ops().construct(&u_.external);
      return;
    }
    visit([]<class L>(L* where) { ::new (static_cast<void*>(where)) L(); });
  }
  ~RawSpinlock() {
    // An external lock is trivially destructible (ExternalRawSpinlock).
    if (kind_ != RawSpinlockKind::external) visit([]<class L>(L* l) { l->~L(); });
  }
  RawSpinlock(const RawSpinlock&) = delete;
  RawSpinlock& operator=(const RawSpinlock&) = delete;

  // raw_spin_lock() / raw_spin_trylock() / raw_spin_unlock(), through lock_stat when the
  // lock has a row of its own (set_stat).
  void lock() {
    if (stat_ != nullptr) {
      Unstat raw{this};
      stamp_ = stat_lock<Env>(raw, *stat_);
      return;
    }
    raw_lock();
  }
  bool try_lock() {
    bool r = false;
    if (kind_ == RawSpinlockKind::external)
      r = ops().try_lock(&u_.external);
    else
      visit([&](auto* l) { r = l->try_lock(); });
    if (r && stat_ != nullptr) {
      stamp_ = Env::now_ns();
      stat_->acquired(Env::cpu(), false, 0, false);
    }
    return r;
  }
  void unlock() {
    if (stat_ != nullptr) {
      Unstat raw{this};
      stat_unlock<Env>(raw, *stat_, stamp_);
      return;
    }
    raw_unlock();
  }
  bool is_locked() const {
    auto* self = const_cast<RawSpinlock*>(this);
    if (kind_ == RawSpinlockKind::external) return ops().is_locked(&self->u_.external);
    bool r = false;
    self->visit([&](auto* l) { r = l->is_locked(); });
    return r;
  }

  // raw_spin_lock_irq() / raw_spin_unlock_irq(): for callers that know IRQs are on.
  void lock_irq() {
    env_irq_disable<Env>();
    lock();
  }
  void unlock_irq() {
    unlock();
    env_irq_enable<Env>();
  }
  // raw_spin_lock_irqsave() / raw_spin_unlock_irqrestore(): callable with IRQs either way.
  IrqFlags lock_irqsave() {
    const IrqFlags f = env_irq_save<Env>();
    lock();
    return f;
  }
  void unlock_irqrestore(IrqFlags f) {
    unlock();
    env_irq_restore<Env>(f);
  }

  RawSpinlockKind kind() const { return kind_; }
  // lock_stat's row for this lock as an instance of its own (e.g. "ebizzy.mmap_sem.wait_lock"),
  // or nullptr. Recording touches no simulated memory (stat/lock_stat.hpp).
  void set_stat(LockStat* s) { stat_ = s; }
  LockStat* stat() const { return stat_; }

 private:
  // The lock without its statistics, for the lock_stat wrapper.
  struct Unstat {
    RawSpinlock* self;
    void lock() { self->raw_lock(); }
    void unlock() { self->raw_unlock(); }
  };
  static const RawSpinlockOps& ops() { return *Env::policies().raw_spinlock_ops; }
  void raw_lock() {
    if (kind_ == RawSpinlockKind::external) {
      ops().lock(&u_.external);
      return;
    }
    visit([](auto* l) { l->lock(); });
  }
  void raw_unlock() {
    if (kind_ == RawSpinlockKind::external) {
      ops().unlock(&u_.external);
      return;
    }
    visit([](auto* l) { l->unlock(); });
  }

  // Calls f with a pointer to the held lock of this library; the one switch of the hot path.
  template <class F>
  void visit(F&& f) {
    switch (kind_) {
      case RawSpinlockKind::external:   // through ops(), never visited
      case RawSpinlockKind::automatic:  // resolved in the constructor
      case RawSpinlockKind::tas:
        f(&u_.tas);
        return;
      case RawSpinlockKind::ticket:
        f(&u_.ticket);
        return;
      case RawSpinlockKind::mcs:
        f(&u_.mcs);
        return;
      case RawSpinlockKind::qspinlock:
        f(&u_.qspinlock);
        return;
      case RawSpinlockKind::pvqspinlock:
        f(&u_.pvqspinlock);
        return;
    }
  }

  // The lock word comes first, at the object's address, whichever kind is held.
  union Held {
    Held() {}
    ~Held() {}
    TasLock<Env> tas;
    TicketLock<Env> ticket;
    McsLock<Env> mcs;
    QueuedSpinlock<Env> qspinlock;
    PvQueuedSpinlock<Env> pvqspinlock;
    alignas(void*) unsigned char external[kRawSpinlockExternalBytes];
  } u_;
  static_assert(sizeof(McsLock<Env>) >= kRawSpinlockExternalBytes &&
                    alignof(McsLock<Env>) >= alignof(void*),
                "an external lock's storage must not change the layout");
  const RawSpinlockKind kind_;
  // Plain fields after the lock word: the holder's hold stamp is its own to write.
  LockStat* stat_ = nullptr;
  std::int64_t stamp_ = 0;
};

}  // namespace pvlock
