// SPDX-License-Identifier: GPL-2.0-only
// The native environment: pvlock's locks on real threads.
//
// - A thread is a "CPU": it gets a small id on first use (or an explicit one from
//   NativeEnv::bind_cpu), released when the thread exits. Ids may exceed the core count;
//   that is how over-subscription (the userspace twin of vCPUs > pCPUs) is exercised.
//   At most native::kMaxCpus (1024) threads hold an id at once, as a kernel has at most
//   NR_CPUS CPUs: one more that takes a lock ends the process with a message saying so
//   (its per-CPU slots would not exist, and a lock cannot fail to be taken).
// - per_cpu<T> storage is indexed by that id; bare metal has no preempted vCPUs, so
//   vcpu_is_preempted() is false.
// - pv_wait/pv_kick model halt/kick with a per-CPU futex word: a kick sets the CPU's
//   "unhalted" token and wakes it, a wait returns at once if the token is set (the KVM
//   pv_unhalted flag makes a kick that arrives before the halt stick the same way).
// - block/wake use a per-task futex word (TASK_UNINTERRUPTIBLE / wake_up_process).
// - need_resched() stands in for the scheduler tick: while more threads hold CPU ids than
//   the machine has cores, a thread that has run for a slice (kSliceNs) without sleeping in
//   block()/pv_wait() reads true once, as TIF_NEED_RESCHED would be set on an over-committed
//   CPU. Reading it true starts the next slice: the kernel would preempt the task at its
//   next preemption point (the lock path's preempt_enable() at the latest). Sleeping starts
//   a new slice too. Without this no native mutex/rwsem spinner would ever give up (owners
//   never look descheduled natively).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <thread>

#include "pvlock/env/environment.hpp"
#include "pvlock/env/native_atomic.hpp"

namespace pvlock {

namespace native {

inline constexpr int kMaxCpus = 1024;

[[noreturn]] inline void too_many_threads() {
  std::fprintf(stderr,
               "pvlock: NativeEnv: more than %d threads use pvlock's locks at once; a thread "
               "is a CPU with its own per-CPU slots, and there are %d (native::kMaxCpus)\n",
               kMaxCpus, kMaxCpus);
  std::abort();
}

inline void futex_wait(std::atomic<std::uint32_t>* addr, std::uint32_t val) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAIT_PRIVATE, val, nullptr,
          nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>* addr, int n) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAKE_PRIVATE, n, nullptr,
          nullptr, 0);
}

inline void pause_once() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// Per-CPU objects are padded to whole cache lines so that neighbours never share one,
// as the kernel's per-CPU areas never do.
template <class T>
struct alignas(64) Padded {
  T value{};
};

// The native "task_struct": lives in per-CPU storage so a pointer to it stays valid after
// its thread exits (the kernel keeps a task alive under RCU while spinners look at it).
struct Task {
  std::atomic<std::uint32_t> blocked{0};  // 1 = TASK_UNINTERRUPTIBLE, 0 = TASK_RUNNING
  std::atomic<bool> on_cpu{false};
  int cpu = -1;
};

struct HaltSlot {
  std::atomic<std::uint32_t> unhalted{0};  // pv_unhalted token
};

struct CounterSlot {
  std::array<std::atomic<std::uint64_t>, kLockEventCount> v{};
};

class CpuIds {
 public:
  static CpuIds& instance() {
    static CpuIds ids;
    return ids;
  }
  int acquire() {
    for (int i = 0; i < kMaxCpus; ++i) {
      bool expected = false;
      if (!used_[i].load(std::memory_order_relaxed) &&
          used_[i].compare_exchange_strong(expected, true)) {
        bump_high_water(i + 1);
        live_.fetch_add(1, std::memory_order_relaxed);
        return i;
      }
    }
    return -1;
  }
  bool acquire_exact(int id) {
    bool expected = false;
    if (id < 0 || id >= kMaxCpus || !used_[id].compare_exchange_strong(expected, true))
      return false;
    bump_high_water(id + 1);
    live_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void release(int id) {
    used_[id].store(false);
    live_.fetch_sub(1, std::memory_order_relaxed);
  }
  // Threads currently holding an id (the native "runnable tasks").
  int live() const { return live_.load(std::memory_order_relaxed); }
  int high_water() const { return high_water_.load(); }

 private:
  void bump_high_water(int n) {
    int cur = high_water_.load();
    while (cur < n && !high_water_.compare_exchange_weak(cur, n)) {
    }
  }
  std::array<std::atomic<bool>, kMaxCpus> used_{};
  std::atomic<int> high_water_{0};
  std::atomic<int> live_{0};
};

}  // namespace native

struct NativeEnv {
  template <class T>
  using atomic = native::Atomic<T>;
  using task = native::Task;

  // ---- CPUs and per-CPU data -------------------------------------------------------------
  static int cpu() {
    Binding& b = binding();
    if (b.id < 0) {
      const int id = native::CpuIds::instance().acquire();
      if (id < 0) native::too_many_threads();
      b.attach(id);
    }
    return b.id;
  }
  // Give the calling thread a fixed CPU id (torture and benchmarks use 0..N-1). Returns
  // false if the id is taken or out of range.
  static bool bind_cpu(int id) {
    Binding& b = binding();
    if (b.id == id) return true;
    if (!native::CpuIds::instance().acquire_exact(id)) return false;
    b.detach();
    b.attach(id);
    return true;
  }
  // Gives the calling thread's CPU id back (a later cpu() call takes a new one).
  static void unbind_cpu() { binding().detach(); }
  static int possible_cpus() { return native::kMaxCpus; }
  // Highest CPU id handed out so far, plus one.
  static int online_cpus() { return native::CpuIds::instance().high_water(); }

  template <class T>
  static T& per_cpu(int cpu) {
    // Never freed, like the kernel's per-CPU areas: a detached thread may still touch its
    // slots (Binding's TLS destructor) while the process runs its static destructors.
    static native::Padded<T>* const storage = new native::Padded<T>[native::kMaxCpus];
    return storage[cpu].value;
  }
  template <class T>
  static T& global() {
    static T object{};
    return object;
  }
  static LockPolicies& policies() {
    static LockPolicies p{};
    return p;
  }
  // kvm_spinlock_init()'s choice for this world. A thread can be preempted while it spins or
  // holds a spinlock, as a vCPU can, and it can halt and be kicked (pv_wait/pv_kick on a
  // futex), as a PV_UNHALT guest can: so the PV qspinlock. Bare metal's native qspinlock
  // hands the lock in FIFO order to a waiter the OS may have descheduled, and a mutex's or
  // rwsem's wait_lock then stalls until that thread runs again (measured: pvlock bench,
  // mutex at 8 threads on 2 CPUs, 0.1-1.3 M ops/s against 1.5 M with the PV qspinlock).
  static constexpr RawSpinlockKind boot_raw_spinlock() { return RawSpinlockKind::pvqspinlock; }

  // ---- Spinning --------------------------------------------------------------------------
  static void cpu_relax() { native::pause_once(); }

  template <class Cond, class Check>
  static SpinResult spin_until(SpinSite, Cond&& cond, SpinBudget& budget, std::uint32_t period,
                               Check&& check) {
    for (std::uint64_t i = 0; budget.iters > 0; ++i, --budget.iters) {
      if (cond()) return SpinResult::ready;
      if (period != 0 && i % period == 0 && check()) return SpinResult::early;
      native::pause_once();
    }
    return cond() ? SpinResult::ready : SpinResult::timeout;
  }

  // Bare metal: no vCPU is ever preempted.
  static bool vcpu_is_preempted(int) { return false; }
  // A scheduler slice: the 3 ms minimum of CFS (and roughly EEVDF's base slice x (1 + log2
  // CPUs) on small machines).
  static constexpr std::int64_t kSliceNs = 3'000'000;
  static bool need_resched() {
    static const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (native::CpuIds::instance().live() <= cores) return false;
    Binding& b = binding();
    const std::int64_t now = now_ns();
    if (b.slice_start == 0) b.slice_start = now;
    if (now - b.slice_start <= kSliceNs) return false;
    b.slice_start = now;
    return true;
  }
  static void preempt_disable() {}
  static void preempt_enable() {}
  // A process cannot mask interrupts: IRQs are always on.
  static void irq_disable() {}
  static void irq_enable() {}
  static bool irqs_disabled() { return false; }

  // ---- Halt / kick -----------------------------------------------------------------------
  static void pv_wait(atomic<std::uint8_t>* ptr, std::uint8_t val) {
    auto& slot = per_cpu<native::HaltSlot>(cpu());
    // A pending kick makes the halt return at once (pv_unhalted), consuming it.
    if (slot.unhalted.exchange(0, std::memory_order_acq_rel) != 0) return;
    if (ptr->load(std::memory_order_acquire) != val) return;
    task* t = current();
    t->on_cpu.store(false, std::memory_order_relaxed);
    native::futex_wait(&slot.unhalted, 0);
    binding().slice_start = now_ns();
    t->on_cpu.store(true, std::memory_order_relaxed);
    slot.unhalted.store(0, std::memory_order_release);
  }
  static void pv_kick(int cpu) {
    auto& slot = per_cpu<native::HaltSlot>(cpu);
    slot.unhalted.store(1, std::memory_order_release);
    native::futex_wake(&slot.unhalted, 1);
  }

  // ---- Tasks -----------------------------------------------------------------------------
  static task* current() {
    int id = cpu();
    return &per_cpu<native::Task>(id);
  }
  static int task_cpu(task* t) { return t->cpu; }
  static bool task_on_cpu(task* t) { return t->on_cpu.load(std::memory_order_relaxed); }
  // The sleep/wake handshake (set_current_state() / try_to_wake_up(), each a full barrier
  // upstream). A sleeper stores `blocked` and then loads its wake condition; a waker stores
  // the condition and then exchanges `blocked`. Only with all four seq_cst does C++ forbid
  // the store-buffering outcome in which the waker reads blocked == 0 (no futex wake) and the
  // sleeper a stale condition (it sleeps for good). The lock's condition accesses are seq_cst
  // too (see RwSem's reader slow path).
  static constexpr std::memory_order kPrepareBlockOrder = std::memory_order_seq_cst;
  static constexpr std::memory_order kWakeOrder = std::memory_order_seq_cst;
  static void prepare_block() { current()->blocked.store(1, kPrepareBlockOrder); }
  static void block() {
    task* t = current();
    if (t->blocked.load(std::memory_order_acquire) == 0) return;
    t->on_cpu.store(false, std::memory_order_relaxed);
    native::futex_wait(&t->blocked, 1);
    binding().slice_start = now_ns();
    t->on_cpu.store(true, std::memory_order_relaxed);
  }
  static void wake(task* t) {
    if (t->blocked.exchange(0, kWakeOrder) != 0) native::futex_wake(&t->blocked, 1);
  }

  // ---- Time and counters -----------------------------------------------------------------
  static std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
  static void count(LockEvent e, std::uint64_t n = 1) {
    auto& c = per_cpu<native::CounterSlot>(cpu()).v[static_cast<std::size_t>(e)];
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  static LockEventCounts read_counters() {
    LockEventCounts out;
    int n = online_cpus();
    for (int c = 0; c < n; ++c)
      for (std::size_t i = 0; i < kLockEventCount; ++i)
        out.v[i] += per_cpu<native::CounterSlot>(c).v[i].load(std::memory_order_relaxed);
    return out;
  }
  static void reset_counters() {
    for (int c = 0; c < online_cpus(); ++c)
      for (auto& x : per_cpu<native::CounterSlot>(c).v) x.store(0, std::memory_order_relaxed);
  }

 private:
  struct Binding {
    int id = -1;
    std::int64_t slice_start = 0;  // need_resched(): when this thread last started running
    void attach(int new_id) {
      id = new_id;
      slice_start = 0;
      task& t = per_cpu<native::Task>(id);
      t.cpu = id;
      t.blocked.store(0);
      t.on_cpu.store(true);
    }
    void detach() {
      if (id < 0) return;
      per_cpu<native::Task>(id).on_cpu.store(false);
      native::CpuIds::instance().release(id);
      id = -1;
    }
    ~Binding() { detach(); }
  };
  static Binding& binding() {
    thread_local Binding b;
    return b;
  }
};

static_assert(Environment<NativeEnv>);

}  // namespace pvlock
