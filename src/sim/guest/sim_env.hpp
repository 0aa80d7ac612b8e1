// SPDX-License-Identifier: GPL-2.0-only
// The simulated environment: pvlock's lock templates on simulated vCPUs.
//
// Every Env operation acts for the task whose fiber is running (see context.hpp): atomics
// are SimAtomic (cache-line costs, serialisation, watchers), per-CPU and global objects
// belong to the task's guest kernel, and the kernel hooks (need_resched, vcpu_is_preempted,
// p->on_cpu) read simulated memory so that spinners polling them sleep on those lines too.
//
// spin_until is lazy: it evaluates the condition once with recording on (loads do not
// yield; the lines read and the cost are remembered), and if the condition is false the
// task sleeps until a recorded line changes, the next periodic check is due or the budget
// runs out, all in running time; then the iterations that elapsed are accounted as if the
// loop had run them (PAUSE + cached re-reads each). A PAUSE loop is never one event per
// iteration. A recorded load that missed saw the line at issue: if the condition came true
// on it, the spinner first waits for the data and reads the condition again as the loads
// completed (a write that reached the line first makes it spin on).
#pragma once

#include <cstdint>
#include <stdexcept>

#include "pvlock/env/environment.hpp"
#include "sim/context.hpp"
#include "sim/guest/guest.hpp"
#include "sim/guest/sim_atomic.hpp"
#include "sim/guest/task.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {

struct SimEnv {
  template <class T>
  using atomic = SimAtomic<T>;
  using task = Task;

  // ---- CPUs and kernel objects ------------------------------------------------------------
  static Task& self() { return *tl_ctx.task; }
  static bool in_task() { return tl_ctx.task != nullptr; }
  static Guest& guest() { return *tl_ctx.task->guest; }
  static int cpu() { return in_task() ? self().vcpu->id : 0; }
  static int possible_cpus() { return in_task() ? guest().vcpu_count() : 1; }
  template <class T>
  static T& per_cpu(int cpu) {
    return guest().per_cpu<T>(cpu);
  }
  template <class T>
  static T& global() {
    return guest().global<T>();
  }
  static LockPolicies& policies() {
    if (in_task()) return guest().policies();
    if (tl_ctx.setup == nullptr)
      throw std::logic_error("a lock built outside any task and any guest's set-up has no kernel");
    return tl_ctx.setup->policies();
  }

  // ---- Spinning ----------------------------------------------------------------------------
  static void cpu_relax() {
    if (in_task()) guest().charge(self(), guest().sim().costs().pause_ns);
  }

  template <class Cond, class Check>
  static SpinResult spin_until(SpinSite site, Cond&& cond, SpinBudget& budget, std::uint32_t period,
                               Check&& check) {
    if (!in_task()) return plain_spin(cond, budget, period, check);
    Task& t = self();
    Guest& g = guest();
    if (t.spin_site != static_cast<int>(site)) g.enter_spin_site(t, site);
    const double pause = g.sim().costs().pause_ns;
    const Sym sym = spin_sym(site);
    const Sym saved = t.sym;
    t.sym = sym;
    g.trace_vcpu(*t.vcpu);  // the vCPU's timeline shows the spin (no-op without a tracer)
    SpinResult result = SpinResult::timeout;
    for (std::uint64_t i = 0;;) {
      if (budget.iters == 0) {
        result = cond() ? SpinResult::ready : SpinResult::timeout;
        break;
      }
      g.begin_record(t);
      const bool ready = cond();
      const double cond_hit = t.rec_hit_ns;
      const double cond_call = t.rec_call_ns;
      const int cond_counts = t.rec_count_n;
      if (ready) {
        g.end_record(t);
        // A load that missed sampled the line at issue; the CPU acts on the value that
        // arrives. Wait for the data and read it again (a hit now, unless it changed).
        if (t.rec_missed) {
          if (t.rec_queue_ns > 0) g.charge(t, t.rec_queue_ns, sym);
          g.sync(t);
          t.loads_settled = true;
          const bool still = cond();
          t.loads_settled = false;
          if (!still) continue;  // a write reached the line first: spin on
        }
        result = SpinResult::ready;
        break;
      }
      if (period != 0 && i % period == 0 && run_check(t, check)) {
        g.end_record(t);
        result = SpinResult::early;
        break;
      }
      g.end_record(t);
      g.charge(t, pause);
      --budget.iters;
      ++i;
      std::uint64_t n = budget.iters;
      double per_iter = t.rec_hit_ns + pause;
      double call = t.rec_call_ns;
      if (period != 1) {
        // Only the condition repeats until the next periodic check.
        per_iter = cond_hit + pause;
        call = cond_call;
        t.rec_count_n = cond_counts;
        if (period != 0) n = std::min<std::uint64_t>(n, (period - i % period) % period);
      }
      const std::uint64_t done = g.spin_sleep(t, sym, n, per_iter, call);
      budget.iters -= done;
      i += done;
    }
    t.sym = saved;
    g.trace_vcpu(*t.vcpu);
    return result;
  }

  static bool vcpu_is_preempted(int cpu) {
    return in_task() && guest().vcpu_is_preempted(self(), cpu);
  }
  static bool need_resched() { return in_task() && guest().need_resched(self()); }
  static void preempt_disable() {
    if (in_task()) guest().preempt_disable(self());
  }
  static void preempt_enable() {
    if (in_task()) guest().preempt_enable(self());
  }
  // local_irq_disable() / local_irq_enable(): the guest defers its tick and IPIs meanwhile.
  static void irq_disable() {
    if (in_task()) guest().irq_disable(self());
  }
  static void irq_enable() {
    if (in_task()) guest().irq_enable(self());
  }
  static bool irqs_disabled() { return in_task() && self().irqs_off; }

  // ---- Halt / kick ---------------------------------------------------------------------------
  static void pv_wait(atomic<std::uint8_t>* ptr, std::uint8_t val) {
    if (in_task()) guest().pv_wait(self(), ptr, val);
  }
  static void pv_kick(int cpu) {
    if (in_task()) guest().pv_kick(self(), cpu);
  }

  // ---- Tasks -----------------------------------------------------------------------------------
  static task* current() { return tl_ctx.task; }
  static int task_cpu(task* t) { return t->vcpu->id; }
  static bool task_on_cpu(task* t) { return t->on_cpu.v.load() != 0; }
  static void prepare_block() { guest().prepare_block(self()); }
  static void block() { guest().block(self()); }
  static void wake(task* t) { guest().wake(self(), *t); }

  // ---- Time and counters
  // -------------------------------------------------------------------------
  static std::int64_t now_ns() {
    if (!in_task()) return tl_ctx.sim != nullptr ? tl_ctx.sim->now() : 0;
    Task& t = self();
    // A clock read inside a spin condition makes the condition time-dependent: it cannot
    // sleep on its lines alone, so it is iterated for real.
    if (t.recording) t.rec_overflow = true;
    return t.guest->sim().now() + static_cast<std::int64_t>(t.pending_ns);
  }
  static void count(LockEvent e, std::uint64_t n = 1) {
    if (in_task()) guest().count(self(), e, n);
  }

 private:
  template <class Check>
  static bool run_check(Task& t, Check& check) {
    t.in_check = true;
    t.check_addr = nullptr;
    const bool r = check();
    t.in_check = false;
    return r;
  }
  template <class Cond, class Check>
  static SpinResult plain_spin(Cond& cond, SpinBudget& budget, std::uint32_t period, Check& check) {
    for (std::uint64_t i = 0; budget.iters > 0; ++i, --budget.iters) {
      if (cond()) return SpinResult::ready;
      if (period != 0 && i % period == 0 && check()) return SpinResult::early;
    }
    return cond() ? SpinResult::ready : SpinResult::timeout;
  }
};

static_assert(Environment<SimEnv>);

}  // namespace pvlock::sim
