// SPDX-License-Identifier: GPL-2.0-only
// The hypervisor: KVM on an over-committed host, as the seeds' hosts ran it.
//
// Every vCPU is a host thread scheduled by HostScheduler on the machine's pCPUs (floating or
// pinned 1:1). The guest reaches the host through the Platform calls:
//   - halt (HLT exit): kvm_vcpu_halt polls for up to the vCPU's adaptive halt_poll_ns while
//     nothing else wants the pCPU (single_task_running), then blocks the thread;
//     halt_poll_ns grows x2 from 10 us after short halts and resets after long ones.
//   - kick (KVM_HC_KICK_CPU): sets pv_unhalted and wakes the target (kvm_vcpu_kick);
//     `kick_boost` (seed 001, 266e85a5ec9) then yields to the target if it is ready.
//   - IPIs: an exit on the sender; delivered when the target runs (posted interrupt), a
//     blocked target is woken; `irq_boost` (d73eb57b80b) marks vCPUs that are woken or
//     receive interrupts "ready" for directed yield. A target halted with IRQs off (pv_wait
//     under spin_lock_irqsave) cannot take the interrupt, but kvm_vcpu_kick still wakes its
//     blocked thread, which re-checks and blocks again: a host switch in and out, and
//     whoever ran on that pCPU is preempted. With APICv only the interrupt that sets the
//     posted-interrupt descriptor's ON bit kicks; guest entry clears it. The guest's timer
//     tick kicks such a vCPU too (kvm_set_pending_timer), every tick.
//   - PLE: a guest PAUSE loop longer than ple_window exits and runs kvm_vcpu_on_spin, a
//     round-robin directed yield to another ready vCPU of the same VM; the window grows x2
//     per exit and resets at schedule-in.
//   - steal time: kvm_sched_out of a still-runnable vCPU writes its "preempted" byte
//     (simulated memory the guest's vcpu_is_preempted reads); schedule-in clears it.
//     `preempted_on_every_put` reproduces hosts before 54aa83c90198 (2022), which also set
//     it when a vCPU halted.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "scenario/scenario.hpp"
#include "sim/engine/rng.hpp"
#include "sim/guest/vcpu.hpp"
#include "sim/host/directed_yield.hpp"
#include "sim/host/host_scheduler.hpp"
#include "sim/platform.hpp"

namespace pvlock::sim {

class KvmPlatform final : public Platform, private host::HostScheduler::Listener {
 public:
  explicit KvmPlatform(const scenario::Scenario& sc);
  ~KvmPlatform() override;

  void attach(Simulation& sim) override;
  bool pv_unhalt(const Guest& guest) const override;
  double halt(Vcpu& v) override;
  double kick(Vcpu& from, Vcpu& to) override;
  double send_ipi(Vcpu& from, Vcpu& to, double handler_ns) override;
  double sched_yield(Vcpu& from, Vcpu& to) override;
  bool on_event(const Event& e) override;
  const char* event_name(std::uint8_t arg) const override;
  void spin_begin(Vcpu& v) override;
  void spin_end(Vcpu& v) override;
  void measure_start() override;
  void halt_ended(Vcpu& v) override;
  void deschedule(Vcpu& v, std::int64_t ns) override;
  std::int64_t steal_ns(const Vcpu& v, std::int64_t now) const override;
  const HostCounters* host_counters() const override { return &counters_; }
  const HostCounters* guest_host_counters(int guest) const override { return &per_guest_[guest]; }
  std::int64_t guest_steal_ns(int guest, std::int64_t now) const override {
    return steal_until(guest, now);
  }

  const HostCounters& counters() const { return counters_; }
  // Per-guest host counters (index = guest index).
  const std::vector<HostCounters>& guest_counters() const { return per_guest_; }
  // The guest's steal_ns as it stands at `now`, waits still in progress included (the
  // counter itself adds a wait when it ends).
  std::int64_t steal_until(int guest, std::int64_t now) const;
  const host::HostScheduler& scheduler() const { return *sched_; }

 private:
  // checking: a blocked vCPU's thread woken by an interrupt the halted guest cannot take
  // (IF=0); it runs kvm_vcpu_block()'s check and blocks again.
  enum class HaltState : std::uint8_t { none, polling, blocked, checking };
  enum Timer : std::uint8_t { kTick = 1, kPollEnd, kPle, kWake, kHkWake, kHkEnd, kHogEnd };
  struct VcpuState {
    host::ThreadId thread = host::kIdle;
    HaltState halt = HaltState::none;
    std::int64_t halt_start = 0;
    std::int64_t poll_ns = 0;  // vcpu->halt_poll_ns
    // One generation per timer kind: arming a timer makes the older one of its kind stale.
    std::uint32_t wake_gen = 0, poll_gen = 0, ple_gen = 0;
    bool exit_return = false;   // the pending start ends a PLE exit, not a schedule-in
    bool ready = false;         // vcpu->ready: a good directed-yield target
    bool preempted = false;     // vcpu->preempted: descheduled while runnable
    bool pending_wake = false;  // woken, waiting for its pCPU switch latency
    bool spinning = false;
    host::SpinLoopState spin_loop;  // vcpu->spin_loop (candidate, alternately)
    // kvm_arch_vcpu_put()'s arch.preempted_in_kernel: guest kernel mode at the last
    // involuntary preemption (false until the first).
    bool preempted_in_kernel = false;
    bool pi_on = false;           // posted-interrupt descriptor ON: a posted vector not yet synced
    std::int64_t ple_window = 0;  // cycles
    std::int64_t runnable_since = -1;  // for steal accounting
    std::int64_t steal_total = 0;      // whole run (the counters restart with the window)
    std::int64_t queued_since = -1;    // woken but queued behind another thread
    std::int64_t kicked_at = -1;       // a kick not yet followed by guest entry
    // Woken from a blocked halt: kvm_vcpu_block() measures block_ns, and adapts the poll
    // window, only when the thread runs again.
    bool poll_adapt_at_entry = false;
    KickPath kick_path = KickPath::on_cpu;
  };

  void on_switch(int pcpu, host::ThreadId prev, host::ThreadId next, bool prev_runnable,
                 std::int64_t now) override;
  Vcpu* vcpu_of(host::ThreadId t) const {
    return t == host::kIdle ? nullptr : thread_vcpu_[static_cast<std::size_t>(t)];
  }
  VcpuState& st(const Vcpu& v) { return state_[static_cast<std::size_t>(v.index)]; }
  // The vCPU's wait in a run queue ends (the host switches to its thread): add the wait to
  // its steal time.
  void account_steal(Vcpu& v, std::int64_t now);
  // Guest entry of a vCPU: closes a pending kick's latency (kick_entry).
  void entered_after_kick(Vcpu& v, std::int64_t now);
  void end_halt(Vcpu& v, std::int64_t now);
  // kvm_vcpu_block()'s adaptive halt polling, after a halt of block_ns.
  void adapt_halt_poll(VcpuState& s, std::int64_t block_ns);
  void wake_vcpu(Vcpu& v);
  // A woken vCPU that waited in a run queue got its pCPU after `waited` ns.
  void count_wake_wait(const Vcpu& v, std::int64_t waited);
  void leave_halt_if_woken(Vcpu& to);
  void masked_wake(Vcpu& v);
  void schedule_ple(Vcpu& v);
  // A PLE exit (kPle timer): grow the window, look for a directed-yield target.
  void handle_pause(Vcpu& v);
  void kvm_vcpu_on_spin(Vcpu& me);
  // host.kvm.in_spin_loop_until = "handler_end": the kernel's extent of vcpu->spin_loop.
  bool handler_scoped_spin_mark() const {
    return sc_.host->kvm.in_spin_loop_until == scenario::HostSpec::Kvm::SpinLoopMark::handler_end;
  }
  // yield_to() from `from` to `to`; `target_switching_in`: `to` was switched in by a wake-up
  // at this instant and is not on its CPU yet (see kick()).
  host::YieldResult directed_yield(Vcpu& from, Vcpu& to, std::uint64_t& tried, std::uint64_t& done,
                                   bool target_switching_in = false);
  // A vCPU's kWake, kPollEnd and kPle timers live in the simulation's per-vCPU timer slots
  // (Simulation::arm_vcpu_timer); arming one supersedes the pending one of its kind.
  void arm_timer(Vcpu& v, std::int64_t at, Timer kind);
  void cancel_timer(Vcpu& v, Timer kind);
  static std::uint32_t timer_slot(Timer kind);
  std::uint32_t& gen_of(VcpuState& s, Timer kind);
  HostCounters& gc(const Vcpu& v);
  // Host housekeeping (HostSpec::housekeeping_*): one pinned thread per pCPU.
  void housekeeping_event(int pcpu, Timer kind);
  void arm_housekeeping_wake(int pcpu);
  // Timed host preemption (fault injection, host_hog.cpp): one pinned, normally asleep
  // thread per pCPU, created only when a fault needs it.
  void add_hog_threads(int pcpus);
  void hog_preempt(Vcpu& v, std::int64_t ns);
  void hog_end(int pcpu);

  scenario::Scenario sc_;
  Simulation* sim_ = nullptr;
  std::unique_ptr<host::HostScheduler> sched_;
  std::vector<VcpuState> state_;    // by global vCPU index
  std::vector<Vcpu*> thread_vcpu_;  // by host thread id (nullptr = stress thread)
  std::vector<int> last_boosted_;   // per guest: kvm->last_boosted_vcpu
  // Per guest, one bit per vCPU (by Vcpu::id): may be a kvm_vcpu_on_spin() target by the
  // platform's own state -- ready, and not ruled out by the kernel-mode rule (which only a
  // pending interrupt could lift, on hosts with 52acd22faa1a). The scan then visits these
  // only; pick_directed_yield() still applies every rule to each. Kept by update_dy().
  std::vector<std::vector<std::uint64_t>> dy_bits_;
  void update_dy(const Vcpu& v);
  int next_dy_candidate(int guest, int from) const;
  std::vector<bool> guest_pinned_;  // per guest: dedicated pCPUs
  HostCounters counters_;
  std::vector<HostCounters> per_guest_;
  std::vector<host::ThreadId> hk_thread_;    // per pCPU (empty = no housekeeping)
  std::vector<std::int64_t> hk_exec_start_;  // its sum_exec when it last woke
  Rng hk_rng_;
  struct Hog {
    host::ThreadId thread = host::kIdle;
    std::int64_t exec_start = 0;  // its sum_exec when it last woke
    std::int64_t burst = 0;       // CPU time it takes before sleeping again (0: asleep)
  };
  std::vector<Hog> hogs_;  // per pCPU (empty = no timed preemption fault)
};

}  // namespace pvlock::sim
