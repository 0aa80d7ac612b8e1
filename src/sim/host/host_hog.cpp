// SPDX-License-Identifier: GPL-2.0-only
// Timed host preemption for fault injection ([faults] preempt_at_access): the host takes a
// vCPU's pCPU away for a given amount of CPU time, right now.
//
// On a real over-committed host a vCPU loses its pCPU between any two guest instructions:
// to a host interrupt and its softirq, a kworker, a QEMU I/O thread, or a higher-priority
// task. Such a preemption is what turns a race window of a few instructions in the guest
// (a load and the store after it) into one of microseconds or milliseconds. The model: a
// pinned host thread per pCPU, asleep until the fault wakes it; it then runs for its burst
// and sleeps again, and the vCPU is "preempted" (kvm_sched_out of a runnable thread: the
// steal-time flag is set, vcpu_is_preempted() sees it) meanwhile, exactly as for housekeeping
// or stress threads. The vCPU also yields, so that the hog runs whatever CFS would have
// decided on its wake-up: the fault is adversarial, it must not be vetoed by the wake-up
// granularity.
#include <algorithm>

#include "sim/host/kvm_platform.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {

void KvmPlatform::add_hog_threads(int pcpus) {
  hogs_.assign(static_cast<std::size_t>(pcpus), Hog{});
  for (int p = 0; p < pcpus; ++p) {
    const host::ThreadId t = sched_->add_sleeping_thread(p, true);
    thread_vcpu_.resize(static_cast<std::size_t>(t) + 1, nullptr);
    hogs_[static_cast<std::size_t>(p)].thread = t;
  }
}

void KvmPlatform::hog_preempt(Vcpu& v, std::int64_t ns) {
  const VcpuState& s = st(v);
  if (hogs_.empty() || !sched_->running(s.thread)) return;  // already off its pCPU
  const std::int64_t now = sim_->now();
  const int pcpu = sched_->pcpu_of(s.thread);
  Hog& h = hogs_[static_cast<std::size_t>(pcpu)];
  if (h.burst > 0) return;  // this pCPU's hog is already awake (waiting behind the vCPU?)
  h.burst = ns;
  h.exec_start = sched_->exec_ns(h.thread, now);
  sched_->wake(h.thread, now);
  if (sched_->running(s.thread)) sched_->yield(s.thread, now);
  sim_->queue().push(now + ns, EventKind::host, static_cast<std::uint32_t>(pcpu), 0, kHogEnd);
}

void KvmPlatform::hog_end(int pcpu) {
  // Sleep again once the burst of CPU time is used; if the hog has not run enough yet (the
  // host preferred another thread), look again when it could have.
  Hog& h = hogs_[static_cast<std::size_t>(pcpu)];
  const std::int64_t now = sim_->now();
  const std::int64_t ran = sched_->exec_ns(h.thread, now) - h.exec_start;
  if (ran >= h.burst && sched_->running(h.thread)) {
    sched_->block(h.thread, now);
    h.burst = 0;
    return;
  }
  // (Used up but preempted at that very instant: it is runnable, not running, and cannot
  // block; the next host tick will have run it again.)
  const std::int64_t wait = ran < h.burst ? h.burst - ran : sc_.host->tick_ns;
  sim_->queue().push(now + std::max<std::int64_t>(1, wait), EventKind::host,
                     static_cast<std::uint32_t>(pcpu), 0, kHogEnd);
}

}  // namespace pvlock::sim
