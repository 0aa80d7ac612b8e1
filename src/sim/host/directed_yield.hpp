// SPDX-License-Identifier: GPL-2.0-only
// kvm_vcpu_on_spin()'s choice of a directed-yield target (virt/kvm/kvm_main.c), separated
// from the platform so that its rules can be tested on their own:
//   - round robin over the VM's vCPUs, starting after kvm->last_boosted_vcpu;
//   - skip ourselves, vCPUs that are not "ready" (not preempted and not just woken), vCPUs
//     blocked in HLT with nothing pending, and -- for a spinner that exited in kernel mode --
//     vCPUs that were in guest user mode when last preempted (they hold no kernel lock),
//     unless an interrupt waits for them and the host has 52acd22faa1a (2021). Since
//     "KVM: Check preempted_in_kernel for involuntary preemption" (046ddeed, v5.3) the rule
//     applies only to vCPUs that are preempted now, so a vCPU woken from HLT is never skipped
//     by it; before, it applied to every candidate (`preempted_only` false);
//   - a candidate that is itself in a PLE spin is eligible only every other time it is
//     looked at (kvm_vcpu_eligible_for_directed_yield toggles dy_eligible; how long the
//     "in a spin loop" mark lasts: SpinLoopState below);
//   - the first successful yield_to() wins; a yield_to() that fails because both run queues
//     hold a single task (-ESRCH) counts against a budget of three, after which we give up;
//   - the scan is two passes, the vCPUs after last_boosted and then those up to it, and the
//     second runs only while the handler's last yield_to() result is zero: if the first
//     pass's last try returned -ESRCH, the loop condition (`!yielded`) ends the search.
#pragma once

namespace pvlock::sim::host {

struct DyView {
  bool ready = false;  // vcpu->ready
  // false: blocked in HLT and not dy_runnable. (kvm_arch_dy_runnable() also counts a pending
  // pv_unhalted, which a blocked vCPU never has here: a kick wakes its thread at once, and a
  // request or a posted interrupt, which the model does not look at.)
  bool runnable = true;
  // kvm_arch_vcpu_in_kernel(): in guest kernel mode at its last involuntary preemption
  bool in_kernel = false;
  // kvm_arch_dy_has_pending_interrupt(), on hosts where it exempts user mode (52acd22faa1a)
  bool irq_pending = false;
  bool preempted = true;  // vcpu->preempted: descheduled while runnable (not just woken)
};

enum class YieldResult { yielded, failed, single_tasks };

// vcpu->spin_loop of one vCPU. How long it counts as "in a spin loop" to the other vCPUs'
// handlers -- which makes it eligible only every other time they look -- is the scenario's
// host.kvm.in_spin_loop_until: `handler_scope` true is the kernel's rule (the mark lasts
// while its own kvm_vcpu_on_spin() runs, including its wait in a run queue after
// yield_to()'s schedule(), and the handler then clears dy_eligible); false the simulator's
// default (from the spin's first PLE exit until the spin ends or the vCPU is scheduled in,
// dy_eligible never reset).
struct SpinLoopState {
  bool in_spin_loop = false;
  bool dy_eligible = false;

  // kvm_vcpu_on_spin() starts: kvm_vcpu_set_in_spin_loop(me, true).
  void handler_started() { in_spin_loop = true; }
  // The handler returns to its still-running vCPU (no yield took its pCPU).
  void handler_returned(bool handler_scope) {
    if (handler_scope) end_handler();
  }
  // The vCPU runs again after being descheduled; a handler that yielded returns here.
  void scheduled_in(bool handler_scope) {
    if (handler_scope) end_handler();
    in_spin_loop = false;
  }
  void spin_ended() { in_spin_loop = false; }
  // Another vCPU's handler looks at this one: kvm_vcpu_eligible_for_directed_yield().
  bool looked_at() {
    const bool eligible = !in_spin_loop || dy_eligible;
    if (in_spin_loop) dy_eligible = !dy_eligible;
    return eligible;
  }

 private:
  void end_handler() {
    in_spin_loop = false;
    dy_eligible = false;
  }
};

// Returns the index of the vCPU yielded to, or -1. `view(i)` describes vCPU i,
// `eligible(i)` applies the dy_eligible rule (and its toggle), `try_yield(i)` attempts
// yield_to(). `yield_to_kernel_mode` is true for PLE exits taken in guest kernel mode;
// `preempted_only` is the host's 046ddeed. `next(i)` is the first vCPU at or after i (or n)
// that may pass the rules: a caller that tracks candidates skips the rest of the VM without
// looking at each (the scan is then as long as the candidates, not the VM). Every vCPU that
// next() passes over must be one the rules would skip (not ready, or preempted in user mode
// with no interrupt that exempts it), since looking at a vCPU has a side effect
// (dy_eligible's toggle) only once the other rules have passed it. 0 <= last_boosted < n.
template <class Next, class View, class Eligible, class TryYield>
int pick_directed_yield(int n, int me, int last_boosted, bool yield_to_kernel_mode,
                        bool preempted_only, Next&& next, View&& view, Eligible&& eligible,
                        TryYield&& try_yield) {
  int budget = 3;
  bool last_single = false;  // the last yield_to() tried returned -ESRCH
  constexpr int kPassDone = -2;
  // One pass over [from, to): the target, -1 (gave up) or kPassDone.
  const auto pass = [&](int from, int to) {
    for (int i = next(from); i < to; i = next(i + 1)) {
      if (i == me) continue;
      const DyView v = view(i);
      if (!v.ready || !v.runnable) continue;
      if ((v.preempted || !preempted_only) && yield_to_kernel_mode && !v.in_kernel &&
          !v.irq_pending)
        continue;
      if (!eligible(i)) continue;
      const YieldResult r = try_yield(i);
      last_single = r == YieldResult::single_tasks;
      switch (r) {
        case YieldResult::yielded:
          return i;
        case YieldResult::single_tasks:
          if (--budget == 0) return -1;
          break;
        case YieldResult::failed:
          break;
      }
    }
    return kPassDone;
  };
  // The vCPUs after last_boosted, then (unless that pass ended on -ESRCH) 0..last_boosted.
  if (last_boosted + 1 < n) {
    if (const int r = pass(last_boosted + 1, n); r != kPassDone) return r;
    if (last_single) return -1;
  }
  const int r = pass(0, last_boosted + 1);
  return r == kPassDone ? -1 : r;
}

// The same, looking at every vCPU.
template <class View, class Eligible, class TryYield>
int pick_directed_yield(int n, int me, int last_boosted, bool yield_to_kernel_mode,
                        bool preempted_only, View&& view, Eligible&& eligible,
                        TryYield&& try_yield) {
  return pick_directed_yield(
      n, me, last_boosted, yield_to_kernel_mode, preempted_only, [](int i) { return i; }, view,
      eligible, try_yield);
}

}  // namespace pvlock::sim::host
