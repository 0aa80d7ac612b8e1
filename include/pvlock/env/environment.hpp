// SPDX-License-Identifier: GPL-2.0-only
// The environment seam: everything a lock algorithm may use, and nothing else.
//
// Every lock in include/pvlock/lock/ is a class template over an Env that satisfies
// `Environment`. The native world (env/native.hpp) runs it on real threads; the simulator
// (src/sim/guest/sim_env.hpp) runs the very same template on simulated vCPUs. Lock code
// never knows which world it is in: there is no #ifdef and no world-specific branch.
//
// What the seam models, with the kernel primitive it stands for:
//   Env::atomic<T>           READ_ONCE/WRITE_ONCE/xchg/cmpxchg/atomic_fetch_* on one word.
//                            Layout-compatible with T, so a lock may view a byte or half-word
//                            of its 32-bit word (subword_view) as x86 qspinlock does.
//   Env::cpu(), possible_cpus()   smp_processor_id(), num_possible_cpus().
//   Env::per_cpu<T>(cpu)     DEFINE_PER_CPU storage; one instance per kernel (per guest VM).
//   Env::global<T>()         a kernel-global object (e.g. the PV lock hash table).
//   Env::policies()          boot parameters / compile-time constants of this kernel.
//   Env::spin_until(...)     every busy-wait loop (smp_cond_load_*, the cpu_relax() loops).
//   Env::cpu_relax()         one PAUSE (only for loops that do work between relaxes).
//   Env::vcpu_is_preempted() steal-time "preempted" byte of another vCPU (false on metal).
//   Env::need_resched()      TIF_NEED_RESCHED of the current CPU.
//   Env::pv_wait(p, v)       halt this vCPU unless *p != v (kvm_wait); may wake spuriously.
//   Env::pv_kick(cpu)        KVM_HC_KICK_CPU: unhalt that vCPU (sticky if it is not halted yet).
//   Env::preempt_disable()/preempt_enable()   as in spin_lock()/spin_unlock().
//   Env::task, current(), task_cpu(), task_on_cpu()   struct task_struct, current,
//                            task_cpu(), p->on_cpu.
//   Env::prepare_block(), block(), wake(task)   set_current_state(TASK_UNINTERRUPTIBLE),
//                            schedule(), wake_up_process(). block() may return spuriously.
//   Env::now_ns()            sched_clock() / local_clock().
//   Env::count(event, n)     lockevent_add(); see env/lock_events.hpp.
// Optional (an Env without them runs with interrupts always enabled):
//   Env::irq_disable(), irq_enable(), irqs_disabled()   local_irq_disable/enable(),
//                            irqs_disabled(); reached through env_irq_*() below.
// Optional (without it, bare metal's native qspinlock):
//   Env::boot_raw_spinlock() the spinlock this world's kernel boots as raw_spinlock_t when
//                            nothing chose one (native_pv_lock_init / kvm_spinlock_init);
//                            reached through env_boot_raw_spinlock() below.
#pragma once

#include <atomic>  // std::memory_order in AtomicOf
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "pvlock/env/lock_events.hpp"
#include "pvlock/lock/policy.hpp"

namespace pvlock {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "pvlock models x86 qspinlock byte layout; little-endian only");

// Outcome of one spin_until() call.
enum class SpinResult : std::uint8_t {
  ready,    // cond() became true
  early,    // the periodic check asked to stop (e.g. pv_wait_early, need_resched)
  timeout,  // the iteration budget ran out
};

// A resumable iteration budget: spin_until() consumes from it, so a caller can spin, do
// something (pv_wait_head_or_lock's cmpxchg), and go on spinning with what is left.
struct SpinBudget {
  std::uint64_t iters;
};

// Which kernel loop a spin belongs to: the simulator attributes spinning CPU time to these
// symbols (its perf-like profile) and the trace names them. Natively it is ignored.
// Every spin site, once: X(name, kernel symbol, meaning). The list makes the enum, the
// symbol each site is profiled under and the profile table of the user guide
// (docs/guide/explaining-a-run.md, scripts/x-list-docs.py). `other` stays last: the
// simulator's profile symbols (sim/guest/profile.hpp) continue after it.
#define PVLOCK_SPIN_SITES(X)                                                                       \
  X(tas_spin, "virt_spin_lock", "virt_spin_lock() / test-and-set spinning")                        \
  X(ticket_spin, "ticket_spin_lock", "ticket lock: waiting for the ticket to come up")             \
  X(mcs_spin, "mcs_spin_lock", "MCS lock: waiting for the predecessor's hand-off")                 \
  X(qspinlock_pending, "queued_spin_lock_slowpath", "the pending bit's wait for the owner")        \
  X(qspinlock_node, "queued_spin_lock_slowpath", "native MCS node wait")                           \
  X(qspinlock_head, "queued_spin_lock_slowpath",                                                   \
    "native queue head waiting for owner and pending to clear")                                    \
  X(pv_wait_node, "pv_wait_node", "PV queued waiter's spin before it halts")                       \
  X(pv_wait_head_or_lock, "pv_wait_head_or_lock", "PV queue head's spin before it halts")          \
  X(qspinlock_next, "queued_spin_lock_slowpath", "new owner waiting for its successor to link in") \
  X(osq_lock, "osq_lock", "optimistic spin queue: waiting for the predecessor")                    \
  X(mutex_spin_on_owner, "mutex_spin_on_owner", "mutex owner spinning")                            \
  X(rwsem_spin_on_owner, "rwsem_spin_on_owner", "rwsem owner spinning")                            \
  X(call_function, "smp_call_function_many", "waiting for the targets of a synchronous IPI")       \
  X(other, "spin", "any other spin loop")

enum class SpinSite : std::uint8_t {
#define PVLOCK_X(name, symbol, meaning) name,
  PVLOCK_SPIN_SITES(PVLOCK_X)
#undef PVLOCK_X
};

inline constexpr const char* spin_site_symbol(SpinSite s) {
  switch (s) {
#define PVLOCK_X(name, symbol, meaning) \
  case SpinSite::name:                  \
    return symbol;
    PVLOCK_SPIN_SITES(PVLOCK_X)
#undef PVLOCK_X
  }
  return "spin";
}

namespace detail {
struct ProbeState {
  int x = 0;
};
struct AlwaysTrue {
  bool operator()() const { return true; }
};
}  // namespace detail

template <class A, class T>
concept AtomicOf = requires(A& a, T v, T& expected, std::memory_order mo) {
  { a.load(mo) } -> std::same_as<T>;
  a.store(v, mo);
  { a.exchange(v, mo) } -> std::same_as<T>;
  { a.compare_exchange(expected, v, mo) } -> std::same_as<bool>;
  { a.fetch_add(v, mo) } -> std::same_as<T>;
  { a.fetch_sub(v, mo) } -> std::same_as<T>;
  { a.fetch_or(v, mo) } -> std::same_as<T>;
  { a.fetch_and(v, mo) } -> std::same_as<T>;
};

template <class E>
concept Environment = requires(int cpu, LockEvent ev, std::uint64_t n, SpinBudget& budget,
                               typename E::task* t,
                               typename E::template atomic<std::uint8_t>* byte_ptr) {
  requires AtomicOf<typename E::template atomic<std::uint8_t>, std::uint8_t>;
  requires AtomicOf<typename E::template atomic<std::uint16_t>, std::uint16_t>;
  requires AtomicOf<typename E::template atomic<std::uint32_t>, std::uint32_t>;
  requires AtomicOf<typename E::template atomic<std::uintptr_t>, std::uintptr_t>;
  requires sizeof(typename E::template atomic<std::uint32_t>) == sizeof(std::uint32_t);

  { E::cpu() } -> std::same_as<int>;
  { E::possible_cpus() } -> std::same_as<int>;
  { E::template per_cpu<detail::ProbeState>(cpu) } -> std::same_as<detail::ProbeState&>;
  { E::template global<detail::ProbeState>() } -> std::same_as<detail::ProbeState&>;
  { E::policies() } -> std::same_as<LockPolicies&>;

  {
    E::spin_until(SpinSite::other, detail::AlwaysTrue{}, budget, 1u, detail::AlwaysTrue{})
    } -> std::same_as<SpinResult>;
  E::cpu_relax();
  { E::vcpu_is_preempted(cpu) } -> std::same_as<bool>;
  { E::need_resched() } -> std::same_as<bool>;
  E::pv_wait(byte_ptr, std::uint8_t{0});
  E::pv_kick(cpu);
  E::preempt_disable();
  E::preempt_enable();

  { E::current() } -> std::same_as<typename E::task*>;
  { E::task_cpu(t) } -> std::same_as<int>;
  { E::task_on_cpu(t) } -> std::same_as<bool>;
  E::prepare_block();
  E::block();
  E::wake(t);

  { E::now_ns() } -> std::same_as<std::int64_t>;
  E::count(ev, n);
};

// A view of the byte or half-word at `byte_offset` inside an Env atomic word, the way x86
// qspinlock addresses its locked byte, pending byte and 16-bit tail inside one u32.
// Env atomics are standard-layout wrappers of their value, so this aliasing is the same the
// kernel's union does; both worlds implement the operations on the real address.
template <class SubAtomic, class WordAtomic>
SubAtomic& subword_view(WordAtomic& word, std::size_t byte_offset) {
  return *reinterpret_cast<SubAtomic*>(reinterpret_cast<unsigned char*>(&word) + byte_offset);
}

// What RawSpinlockKind::automatic is in this world: Env::boot_raw_spinlock() if it has one,
// else bare metal's native qspinlock.
template <class E>
constexpr RawSpinlockKind env_boot_raw_spinlock() {
  if constexpr (requires {
                  { E::boot_raw_spinlock() } -> std::same_as<RawSpinlockKind>;
                })
    return E::boot_raw_spinlock();
  else
    return RawSpinlockKind::qspinlock;
}

// local_irq_disable() and friends, for an Env that models interrupts. The simulator does:
// with IRQs off the guest's tick (and so its preemption) waits, and a halt can only be ended
// by a kick. Natively a process cannot mask interrupts: the calls are absent or no-ops.
template <class E>
void env_irq_disable() {
  if constexpr (requires { E::irq_disable(); }) E::irq_disable();
}
template <class E>
void env_irq_enable() {
  if constexpr (requires { E::irq_enable(); }) E::irq_enable();
}
template <class E>
bool env_irqs_disabled() {
  if constexpr (requires { E::irqs_disabled(); }) {
    return E::irqs_disabled();
  } else {
    return false;
  }
}
// local_irq_save() / local_irq_restore(): the flags say whether IRQs were already off.
struct IrqFlags {
  bool were_disabled = false;
};
template <class E>
IrqFlags env_irq_save() {
  const IrqFlags f{env_irqs_disabled<E>()};
  env_irq_disable<E>();
  return f;
}
template <class E>
void env_irq_restore(IrqFlags f) {
  if (!f.were_disabled) env_irq_enable<E>();
}

// owner_on_cpu() from include/linux/sched.h: the owner is running and, in a guest, its
// vCPU is not preempted. Consulted by mutex/rwsem optimistic spinning. With
// preempt_check_period = 0 (kernels before v4.9, i.e. before "kernel/locking: Drop the
// overhead of {mutex,rwsem}_spin_on_owner", the state seed 003 measured) only owner->on_cpu.
template <Environment E>
bool owner_on_cpu(typename E::task* owner) {
  if (!E::task_on_cpu(owner)) return false;
  return E::policies().owner_spin.preempt_check_period == 0 ||
         !E::vcpu_is_preempted(E::task_cpu(owner));
}

}  // namespace pvlock
