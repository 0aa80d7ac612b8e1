// SPDX-License-Identifier: GPL-2.0-only
// Guest, timer sleeps: a task that sleeps for a while (nanosleep, usleep, schedule_hrtimeout)
// arms an hrtimer on its vCPU and blocks; the timer interrupt there wakes it
// (hrtimer_wakeup -> wake_up_process), on the vCPU the wake placement picks.
#include "sim/guest/guest.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {

void Guest::sleep(Task& t, Time ns) {
  sync(t);
  prepare_block(t);
  // The event names the task (gen = its id) and the vCPU whose local timer it armed.
  sim_.queue().push(sim_.now() + std::max<Time>(ns, 0), EventKind::timer,
                    static_cast<std::uint32_t>(t.vcpu->index), static_cast<std::uint32_t>(t.id));
  block(t);
}

void Guest::timer_expired(Vcpu& v, std::uint32_t task_id) {
  Task& t = *tasks_[task_id];
  // Only the timer wakes a sleeping task, and it sleeps once at a time: the task is blocked.
  if (t.state.v.raw() == 0 || !t.blocked) return;
  t.state.v.hw_store(0);
  t.blocked = false;
  select_wake_cpu(nullptr, t);
  Vcpu& tv = *t.vcpu;
  if (cfs()) t.vruntime = std::max(t.vruntime, tv.min_vruntime - spec_.sched_latency_ns / 2);
  enqueue(tv, t);
  if (tv.curr != nullptr && wakeup_preempts(tv, t)) set_need_resched(tv);
  // The timer interrupt (its injection and handler taken as an IPI handler's cost) runs on
  // the vCPU that armed it; a wake-up placed elsewhere sends that vCPU a reschedule IPI.
  const double handler = sim_.costs().ipi_handle_ns;
  deliver_irq(v, handler);
  sim_.platform().halt_ended(v);
  if (&tv != &v) (void)ipi(v, tv, handler, nullptr);  // the sender's cost: interrupt time
}

}  // namespace pvlock::sim
