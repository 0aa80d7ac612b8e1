// SPDX-License-Identifier: GPL-2.0-only
// Guest, wake-up placement: which vCPU try_to_wake_up() queues a woken task on.
//
// select_task_rq_fair() for a wake-up ends in select_idle_sibling(): the task's previous
// CPU if it is idle, else an idle CPU of the same last-level cache found by a scan that
// starts after it (select_idle_cpu's for_each_cpu_wrap), else the previous CPU. Here all of
// a guest's vCPUs are one LLC, the scan covers all of them (no SIS_PROP cut-off) and
// wake_affine() is not modelled (the waker's CPU is never preferred). Whether a vCPU counts
// as idle is the era switch: idle_cpu() alone (nothing running or queued) before
// 247f2f6f3c70, available_idle_cpu() (idle and not preempted by the host, read from the
// steal-time area as vcpu_is_preempted() reads it) since.
#include "sim/guest/guest.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {

void Guest::select_wake_cpu(Task* waker, Task& t) {
  using P = scenario::GuestSpec::WakePlacement;
  if (spec_.wake_placement == P::prev) return;
  const int n = vcpu_count();
  const int prev = t.vcpu->id;
  auto idle = [&](int c) {
    const Vcpu& v = vcpu(c);
    if (v.curr != nullptr || v.rq_len != 0) return false;
    if (spec_.wake_placement == P::idle_cpu) return true;
    if (waker != nullptr) return !vcpu_is_preempted(*waker, c);
    return v.steal.preempted.raw() == 0;
  };
  int target = prev;
  if (!idle(prev))
    for (int k = 1; k < n; ++k)
      if (const int c = (prev + k) % n; idle(c)) {
        target = c;
        break;
      }
  if (target == prev) return;
  Vcpu& from = *t.vcpu;
  Vcpu& to = vcpu(target);
  // migrate_task_rq_fair(): the task's vruntime is kept relative to its run queue's
  // min_vruntime.
  if (cfs()) t.vruntime = t.vruntime - from.min_vruntime + to.min_vruntime;
  t.vcpu = &to;
}

}  // namespace pvlock::sim
