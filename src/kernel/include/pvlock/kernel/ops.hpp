// SPDX-License-Identifier: GPL-2.0-only
// The pvk_ops table of an Env: how the kernel's C code (through the shim, abi.h) reaches
// pvlock's Environment seam. Shared accesses become Env::atomic operations on the kernel's
// own addresses (Env atomics are layout-compatible with the value, see subword_view), so
// in the simulator each one is a simulated access; the rest maps one to one.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "pvlock/env/environment.hpp"
#include "pvlock/env/lock_events.hpp"
#include "pvlock/kernel/abi.h"
#include "pvlock/kernel/instance.hpp"
#include "pvlock/kernel/spin_replay.hpp"
#include "pvlock/kernel/variants.hpp"

namespace pvlock::kernel {

constexpr std::memory_order to_order(int o) {
  switch (o) {
    case PVK_RELAXED:
      return std::memory_order_relaxed;
    case PVK_ACQUIRE:
      return std::memory_order_acquire;
    case PVK_RELEASE:
      return std::memory_order_release;
    default:
      return std::memory_order_seq_cst;
  }
}

// The kernel's lock event index -> pvlock's LockEvent (same names), -1 for a name pvlock
// does not count.
inline const std::vector<int>& event_map() {
  static const std::vector<int> map = [] {
    std::vector<int> m(static_cast<std::size_t>(pvk_lock_event_count()), -1);
    for (int k = 0; k < pvk_lock_event_count(); ++k) {
      const std::string_view name = pvk_lock_event_name(k);
      for (std::size_t i = 0; i < kLockEventCount; ++i)
        if (kLockEventNames[i] == name) m[static_cast<std::size_t>(k)] = static_cast<int>(i);
    }
    return m;
  }();
  return map;
}

// B: the build of the kernel files (variants.hpp) whose code the table serves; each build
// has a kernel instance of its own.
template <Environment Env, class B = Stock>
struct Ops {
  template <class T>
  using A = typename Env::template atomic<T>;

  template <class T>
  static A<T>& at(const volatile void* p) {
    return *reinterpret_cast<A<T>*>(const_cast<void*>(p));
  }

  // Calls f.template operator()<T>() with the unsigned type of `size` bytes.
  template <class F>
  static std::uint64_t sized(unsigned size, F&& f) {
    switch (size) {
      case 1:
        return f.template operator()<std::uint8_t>();
      case 2:
        return f.template operator()<std::uint16_t>();
      case 4:
        return f.template operator()<std::uint32_t>();
      default:
        return f.template operator()<std::uintptr_t>();
    }
  }

  // The accesses themselves, outside the spin replay (spin_replay.hpp).
  static std::uint64_t raw_load(const volatile void* p, unsigned size, int o) {
    return sized(size, [&]<class T>() -> std::uint64_t { return at<T>(p).load(to_order(o)); });
  }
  static std::uint64_t perform(const SpinReplay::Read& r) {
    switch (r.kind) {
      case SpinReplay::kNeedResched:
        return Env::need_resched() ? 1 : 0;
      case SpinReplay::kPreempted:
        return Env::vcpu_is_preempted(r.arg) ? 1 : 0;
      default:
        return raw_load(r.addr, static_cast<unsigned>(r.arg & 0xff), r.arg >> 8);
    }
  }
  // A replayable read: served by a replay in progress, or made and recorded.
  static std::uint64_t read(const SpinReplay::Read& r) {
    SpinReplay& sr = replay();
    std::uint64_t v = 0;
    if (sr.serve(r, &v)) return v;
    SpinReplay::Read got = r;
    got.value = perform(r);
    sr.record(got);
    return got.value;
  }
  // Not a read: the loop the replay followed (if any) has ended.
  static void other() { replay().reset(); }

  static std::uint64_t load(const volatile void* p, unsigned size, int o) {
    return read({p, 0, static_cast<int>(size) | o << 8, SpinReplay::kLoad});
  }
  static void store(volatile void* p, unsigned size, std::uint64_t v, int o) {
    other();
    sized(size, [&]<class T>() -> std::uint64_t {
      at<T>(p).store(static_cast<T>(v), to_order(o));
      return 0;
    });
  }
  static std::uint64_t xchg(volatile void* p, unsigned size, std::uint64_t v, int o) {
    other();
    return sized(size, [&]<class T>() -> std::uint64_t {
      return at<T>(p).exchange(static_cast<T>(v), to_order(o));
    });
  }
  static std::uint64_t cmpxchg(volatile void* p, unsigned size, std::uint64_t old, std::uint64_t v,
                               int o) {
    other();
    return sized(size, [&]<class T>() -> std::uint64_t {
      T expected = static_cast<T>(old);
      at<T>(p).compare_exchange(expected, static_cast<T>(v), to_order(o));
      return expected;  // unchanged on success: the value found either way
    });
  }
  static std::uint64_t fetch_add(volatile void* p, unsigned size, std::uint64_t v, int o) {
    other();
    return sized(size, [&]<class T>() -> std::uint64_t {
      return at<T>(p).fetch_add(static_cast<T>(v), to_order(o));
    });
  }
  static std::uint64_t fetch_or(volatile void* p, unsigned size, std::uint64_t v, int o) {
    other();
    return sized(size, [&]<class T>() -> std::uint64_t {
      return at<T>(p).fetch_or(static_cast<T>(v), to_order(o));
    });
  }
  static std::uint64_t fetch_and(volatile void* p, unsigned size, std::uint64_t v, int o) {
    other();
    return sized(size, [&]<class T>() -> std::uint64_t {
      return at<T>(p).fetch_and(static_cast<T>(v), to_order(o));
    });
  }
  static void fence(int kind) {
    // A simulated CPU is sequentially consistent: there the fence only orders the host
    // thread's own accesses, which are already in program order.
    const auto order = kind == PVK_RMB   ? std::memory_order_acquire
                       : kind == PVK_WMB ? std::memory_order_release
                                         : std::memory_order_seq_cst;
#if defined(__SANITIZE_THREAD__)
    // ThreadSanitizer does not model stand-alone fences (g++ refuses them under -Wtsan).
    // A locked RMW is how x86 Linux itself implements smp_mb(), and TSan does model an
    // RMW's synchronisation, so the sanitizer build fences through one shared word.
    static std::atomic<unsigned> fence_word{0};
    fence_word.fetch_add(0, order == std::memory_order_seq_cst ? std::memory_order_seq_cst
                                                               : std::memory_order_acq_rel);
#else
    std::atomic_thread_fence(order);
#endif
  }

  // cpu_relax() of a kernel loop: one PAUSE, or a replayed one, or the PAUSE followed by a
  // wait over the iterations that repeat this one (spin_replay.hpp). noinline: the return
  // address names the loop.
  [[gnu::noinline]] static void cpu_relax() {
    SpinReplay& sr = replay();
    if (sr.relax_replayed()) return;
    Env::cpu_relax();
    const std::uint64_t m = sr.end_iteration(__builtin_return_address(0));
    if (m == 0) return;
    SpinBudget budget{m};
    Env::spin_until(
        SpinSite::other,
        [&sr, &budget] {
          sr.nlast = 0;
          // Evaluated once more when the budget has run out: that iteration (on the loop's
          // mark, where its shape may change) is left to the C code.
          if (budget.iters == 0) return false;
          for (int k = 0; k < sr.npattern; ++k) {
            const SpinReplay::Read& r = sr.pattern[static_cast<std::size_t>(k)];
            const std::uint64_t v = perform(r);
            sr.last[static_cast<std::size_t>(k)] = v;
            sr.nlast = k + 1;
            if (v != r.value) return true;
          }
          return false;
        },
        budget, 0, [] { return false; });
    sr.replay(m - budget.iters);
  }
  static int cpu() { return Env::cpu(); }
  static int nr_cpus() { return instance().vm.nr_cpus; }
  static int need_resched() {
    return static_cast<int>(read({nullptr, 0, 0, SpinReplay::kNeedResched}));
  }
  static int vcpu_is_preempted(int cpu) {
    return static_cast<int>(read({nullptr, 0, cpu, SpinReplay::kPreempted}));
  }
  static void pv_wait(std::uint8_t* p, std::uint8_t v) {
    other();
    Env::pv_wait(&at<std::uint8_t>(p), v);
  }
  static void pv_kick(int cpu) {
    other();
    Env::pv_kick(cpu);
  }
  static std::uint64_t sched_clock() {
    other();
    const std::int64_t t = Env::now_ns();
    return t > 0 ? static_cast<std::uint64_t>(t) : 0;
  }
  static void lock_event(int event, long n) {
    other();
    const std::vector<int>& m = event_map();
    if (event < 0 || static_cast<std::size_t>(event) >= m.size() || n <= 0) return;
    const int e = m[static_cast<std::size_t>(event)];
    if (e >= 0) Env::count(static_cast<LockEvent>(e), static_cast<std::uint64_t>(n));
  }
  static pvk_vm* vm() { return &instance().vm; }
  static void* vm_alloc(std::size_t size, std::size_t align) {
    return instance().alloc(size, align);
  }
  static void warn(const char* file, int line, const char* what) {
    std::fprintf(stderr, "kernel: WARNING: %s:%d: %s\n", file, line, what);
  }
  static void bug(const char* file, int line) {
    std::fprintf(stderr, "kernel: BUG at %s:%d\n", file, line);
    std::abort();
  }

  static constexpr pvk_ops table{load,
                                 store,
                                 xchg,
                                 cmpxchg,
                                 fetch_add,
                                 fetch_or,
                                 fetch_and,
                                 fence,
                                 cpu_relax,
                                 cpu,
                                 nr_cpus,
                                 need_resched,
                                 vcpu_is_preempted,
                                 pv_wait,
                                 pv_kick,
                                 sched_clock,
                                 lock_event,
                                 vm,
                                 vm_alloc,
                                 warn,
                                 bug};

  static Instance& instance() { return Env::template global<BuildInstance<B>>(); }
  // The calling CPU's spin replay. Replayed iterations call here several times each, so
  // the last lookup is kept per thread, keyed by the task (simulated tasks share threads;
  // a task never changes CPU inside a kernel lock call, which runs with preemption off).
  // enter() refreshes it, so a key left from an earlier run is never used.
  struct ReplayCache {
    const void* task = nullptr;
    SpinReplay* replay = nullptr;
  };
  static inline thread_local ReplayCache replay_cache{};
  static SpinReplay& replay() {
    const void* me = Env::current();
    if (me != nullptr && replay_cache.task == me) return *replay_cache.replay;
    SpinReplay& r = Env::template per_cpu<SpinReplay>(Env::cpu());
    replay_cache = {me, &r};
    return r;
  }

  // Installs this Env's table for the calling thread and sets the kernel instance up on
  // first use: per-CPU areas for every possible CPU, then __pv_init_lock_hash().
  static void enter() {
    pvk_cur = &table;
    replay_cache = {};
    replay().reset();
    Instance& in = instance();
    if (in.state.load(std::memory_order_acquire) == 2) return;
    int expected = 0;
    if (in.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      const std::size_t align = pvk_percpu_align();
      const std::size_t stride = (pvk_percpu_size() + align - 1) / align * align;
      const int n = Env::possible_cpus();
      in.vm.nr_cpus = n;
      in.vm.percpu_stride = stride;
      in.vm.percpu =
          static_cast<unsigned char*>(in.alloc(stride * static_cast<std::size_t>(n), align));
      B::pv_init_lock_hash();
      in.state.store(2, std::memory_order_release);
      return;
    }
    while (in.state.load(std::memory_order_acquire) != 2) Env::cpu_relax();
  }
};

}  // namespace pvlock::kernel
