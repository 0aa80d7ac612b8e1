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
//     looked at (kvm_vcpu_eligible_for_directed_yield toggles dy_eligible);
//   - the first successful yield_to() wins; a yield_to() that fails because both run queues
//     hold a single task (-ESRCH) counts against a budget of three, after which we give up;
//   - the scan is two passes, the vCPUs after last_boosted and then those up to it, and the
//     second runs only while the handler's last yield_to() result is zero: if the first
//     pass's last try returned -ESRCH, the loop condition (`!yielded`) ends the search.
#pragma once

namespace pvlock::sim::host {

struct DyView {
  bool ready = false;    // vcpu->ready
  bool runnable = true;  // false: blocked in HLT and not dy_runnable
  // kvm_arch_vcpu_in_kernel(): in guest kernel mode at its last involuntary preemption
  bool in_kernel = false;
  // kvm_arch_dy_has_pending_interrupt(), on hosts where it exempts user mode (52acd22faa1a)
  bool irq_pending = false;
  bool preempted = true;  // vcpu->preempted: descheduled while runnable (not just woken)
};

enum class YieldResult { yielded, failed, single_tasks };

// Returns the index of the vCPU yielded to, or -1. `view(i)` describes vCPU i,
// `eligible(i)` applies the dy_eligible rule (and its toggle), `try_yield(i)` attempts
// yield_to(). `yield_to_kernel_mode` is true for PLE exits taken in guest kernel mode;
// `preempted_only` is the host's 046ddeed.
template <class View, class Eligible, class TryYield>
int pick_directed_yield(int n, int me, int last_boosted, bool yield_to_kernel_mode,
                        bool preempted_only, View&& view, Eligible&& eligible,
                        TryYield&& try_yield) {
  int budget = 3;
  bool last_single = false;  // the last yield_to() tried returned -ESRCH
  for (int k = 1; k <= n; ++k) {
    const int i = (last_boosted + k) % n;
    if (i == 0 && k > 1 && last_single) return -1;  // the second pass starts at vCPU 0
    if (i == me) continue;
    const DyView v = view(i);
    if (!v.ready || !v.runnable) continue;
    if ((v.preempted || !preempted_only) && yield_to_kernel_mode && !v.in_kernel && !v.irq_pending)
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
  return -1;
}

}  // namespace pvlock::sim::host
