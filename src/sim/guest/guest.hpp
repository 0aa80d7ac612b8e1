// SPDX-License-Identifier: GPL-2.0-only
// The guest kernel of one VM (on bare metal: the one OS on all CPUs).
//
// Tasks live on per-vCPU run queues (no migration). The kernel mechanisms modelled:
// preempt_count and IRQ-disabled regions; TIF_NEED_RESCHED in a per-vCPU thread_info word
// (simulated memory, so spinners that poll need_resched() are woken when it is set); a
// scheduler tick that time-slices the tasks of one vCPU and preempts at the next preemption
// point after CFS's sched_slice() (the 24 ms latency shared among the runnable tasks, never
// under sched_min_granularity_ns), the run queue taken in turn (scheduler = "rr") or in CFS's
// vruntime order (scheduler = "cfs"); wait/wake (set_current_state + schedule / try_to_wake_up,
// with a reschedule IPI to another vCPU); an idle loop that halts; pv_wait / pv_kick halting and
// kicking through the Platform. Per-CPU and global kernel objects are allocated per guest.
//
// The task-side methods (taking Task&) run inside that task's fiber; the others run in the
// event loop or on behalf of another CPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pvlock/env/lock_events.hpp"
#include "pvlock/lock/policy.hpp"
#include "pvlock/stat/lock_stat.hpp"
#include "scenario/scenario.hpp"
#include "sim/engine/time.hpp"
#include "sim/guest/profile.hpp"
#include "sim/guest/task.hpp"
#include "sim/guest/vcpu.hpp"

namespace pvlock::sim {

class Simulation;

class Guest {
 public:
  Guest(Simulation& sim, int index, std::string name, const scenario::GuestSpec& spec, int vcpus,
        int first_global_vcpu);
  ~Guest();
  Guest(const Guest&) = delete;
  Guest& operator=(const Guest&) = delete;

  // ---- Set-up ---------------------------------------------------------------------------
  // `forked`: the task is a child that another task of the workload forked before the run
  // (under scheduler = "cfs" it starts a slice behind its vCPU's min_vruntime, as
  // place_entity()'s START_DEBIT places a new child behind its parent).
  Task& create_task(std::string name, int vcpu, std::function<void()> program, bool forked = false);
  void start();           // every vCPU picks its first task; ticks begin
  std::string lock_name;  // the resolved spinlock ("auto" replaced), set by the runner

  // ---- Accessors ------------------------------------------------------------------------
  Simulation& sim() { return sim_; }
  int index() const { return index_; }
  const std::string& name() const { return name_; }
  const scenario::GuestSpec& spec() const { return spec_; }
  LockPolicies& policies() { return policies_; }
  int vcpu_count() const { return static_cast<int>(vcpus_.size()); }
  Vcpu& vcpu(int i) { return *vcpus_[static_cast<std::size_t>(i)]; }
  std::vector<std::unique_ptr<Task>>& tasks() { return tasks_; }
  LockEventCounts& counters() { return counters_; }
  Profile& profile() { return profile_; }
  // Lock statistics (/proc/lock_stat) of this kernel's lock instances: workloads register
  // each instance's LockStat at set-up, so the run needs no allocation to collect them.
  void register_lock_stat(LockStat& s) { lock_stats_.push_back(&s); }
  const std::vector<LockStat*>& lock_stats() const { return lock_stats_; }
  // Start of the measured window: counters, profile and lock statistics restart.
  void reset_stats();
  // End of the run: attribute open idle/halt intervals.
  void finish_stats();

  // ---- Task side: time --------------------------------------------------------------------
  void charge(Task& t, double ns, Sym s);
  void charge(Task& t, double ns) { charge(t, ns, t.sym); }
  // Extra cost of a kernel call (e.g. vcpu_is_preempted): also part of a recorded spin
  // iteration.
  void charge_call(Task& t, double ns, Sym s);
  void sync(Task& t);  // wait out pending local time
  // Waits ns of running time (servicing interrupts, preempting if allowed). With
  // `watchable`, returns early when a watched line changes. Returns the running time this
  // task spent in the wait (handlers and other tasks excluded).
  Time wait(Task& t, Time ns, bool watchable);
  void compute(Task& t, Time ns);
  void count(Task& t, LockEvent e, std::uint64_t n);
  // The timeline tracer's hook (sim/trace/): v's state may have changed. No-op when off.
  void trace_vcpu(Vcpu& v);
  // The vCPU whose per-CPU object (e.g. a qspinlock MCS node) holds address p, or -1.
  int per_cpu_owner(const void* p) const;

  // ---- Task side: lazy spinning -------------------------------------------------------------
  void begin_record(Task& t);
  void end_record(Task& t) { t.recording = false; }
  void record_line(Task& t, std::uint64_t key, std::uint32_t version);
  // Sleeps up to n spin iterations of per_iter ns each, until a recorded line changes.
  // Returns the iterations that elapsed.
  std::uint64_t spin_sleep(Task& t, Sym site, std::uint64_t n, double per_iter,
                           double call_ns_per_iter);

  // ---- Task side: scheduler ---------------------------------------------------------------
  void schedule(Task& t);
  void preempt_disable(Task& t) { ++t.preempt_count; }
  void preempt_enable(Task& t);
  void irq_disable(Task& t) { t.irqs_off = true; }
  void irq_enable(Task& t);
  // System call entry and return to user mode (the preemption point of preempt = "none").
  void kernel_enter(Task& t);
  void kernel_exit(Task& t);
  void prepare_block(Task& t);
  void block(Task& t);
  void wake(Task& waker, Task& target);
  // A timer sleep (nanosleep / schedule_hrtimeout): the task blocks, and an hrtimer on its
  // vCPU wakes it ns later from the timer interrupt (guest_timer.cpp).
  void sleep(Task& t, Time ns);
  bool need_resched(Task& t);
  bool vcpu_is_preempted(Task& t, int cpu);
  void pv_wait(Task& t, const SimAtomic<std::uint8_t>* ptr, std::uint8_t val);
  void pv_kick(Task& t, int cpu);
  // The task enters a spin loop at a different site than before (spin_until): queue-head
  // detection for fault injection and the watchdog's diagnostic.
  void enter_spin_site(Task& t, SpinSite site);
  // An IPI to vCPU `cpu` whose handler costs handler_ns there; `ack`, if given, is
  // decremented when the handler has run (smp_call_function_many's wait). A function call
  // (with `ack`) to a vCPU that has not yet run the ones queued before is queued behind
  // them without a new IPI, as the kernel's call_single_queue does: returns whether an IPI
  // was sent (the target is in cpumask_ipi).
  bool send_ipi(Task& t, int cpu, double handler_ns, SimAtomic<std::uint32_t>* ack);
  // smp_ops.send_call_func_ipi has sent IPIs to the vCPUs flagged in `targets`; a PV sched
  // yield guest (kvm_smp_send_call_func_ipi) then yields to the first one it sees preempted.
  void call_function_ipis_sent(Task& t, const std::vector<std::uint8_t>& targets);

  // ---- Platform / event-loop side -------------------------------------------------------------
  void dispatch(Vcpu& v);  // a resume event: continue the current task or the idle loop
  void tick(Vcpu& v);      // scheduler tick
  void deliver_irq(Vcpu& v, double handler_ns);
  void kick_arrived(Vcpu& v);
  // The idle loop's HLT (default_idle): the vCPU halts until an interrupt or a kick. One that
  // returns at once (a pending pv_unhalted) runs the idle loop again after the exit's cost.
  void idle_halt(Vcpu& v);
  // The hrtimer of a sleeping task (Guest::sleep) fires on vCPU v.
  void timer_expired(Vcpu& v, std::uint32_t task_id);
  void after_task_exit(Vcpu& v);
  void watcher_fired(Task& t);  // a line the spinning task watches changed

  // ---- Kernel objects -------------------------------------------------------------------
  template <class T>
  T& per_cpu(int cpu) {
    static const std::size_t id = next_slot_id();
    return static_cast<Padded<T>*>(slot<Padded<T>>(id, vcpu_count()))[cpu].value;
  }
  template <class T>
  T& global() {
    static const std::size_t id = next_slot_id();
    return static_cast<Padded<T>*>(slot<Padded<T>>(id, 1))->value;
  }

 private:
  template <class T>
  struct alignas(64) Padded {
    T value{};
  };
  struct Slot {
    void* ptr = nullptr;
    void (*del)(void*) = nullptr;
    std::size_t elem = 0;  // element size and count (per-CPU slots: one per vCPU)
    int n = 0;
  };
  static std::size_t next_slot_id();
  template <class P>
  void* slot(std::size_t id, int n) {
    if (id >= slots_.size()) slots_.resize(id + 1);
    Slot& s = slots_[id];
    if (s.ptr == nullptr) {
      s.ptr = new P[static_cast<std::size_t>(n)];
      s.del = [](void* p) { delete[] static_cast<P*>(p); };
      s.elem = sizeof(P);
      s.n = n;
    }
    return s.ptr;
  }

  // An IPI from -> to through the fault layer and the platform; returns the sender's cost.
  double ipi(Vcpu& from, Vcpu& to, double handler_ns, SimAtomic<std::uint32_t>* ack);
  void enqueue(Vcpu& v, Task& t);
  // try_to_wake_up()'s select_task_rq(): the vCPU a woken task goes to, under the spec's
  // wake_placement; moves the task there (guest_wake.cpp). `waker` pays for the
  // vcpu_is_preempted() calls (nullptr: woken from an interrupt, which the model does not
  // charge).
  void select_wake_cpu(Task* waker, Task& t);
  // The next task to run (rr: the oldest runnable; cfs: the least vruntime), off the queue;
  // it becomes the one whose running time counts from now.
  Task* dequeue(Vcpu& v);
  bool cfs() const { return spec_.scheduler == scenario::GuestSpec::Scheduler::cfs; }
  // The scheduler's clock for the vCPU (rq clock_task): wall time, less the vCPU's steal
  // time under steal_time_accounting. Slices and vruntime run on it.
  Time clock_task(const Vcpu& v) const;
  // The queued task with the least vruntime (nullptr: none queued).
  const Task* leftmost(const Vcpu& v) const;
  // update_curr(): bring the running task's vruntime, and min_vruntime, up to now (cfs).
  // Returns the leftmost queued task it looked at (nullptr: none, or nothing running).
  const Task* update_curr(Vcpu& v);
  // check_preempt_wakeup(): should the woken `t` preempt what runs on its vCPU?
  bool wakeup_preempts(Vcpu& v, const Task& t);
  // The tick's test: has the running task had its turn, with others waiting?
  bool slice_over(Vcpu& v);
  void yield(Task& t);
  void resume_task(Task& t);
  // Takes the next step of the wait `t` is parked in without its fiber, if that step only
  // re-arms the vCPU's resume; false if the fiber must run.
  bool rearm_wait(Task& t);
  // The interrupts pending for the task's vCPU run now, unless it has IRQs off; returns
  // their handlers' time. Usually there are none: that test is inline, the rest is not
  // (it runs at every step of every wait).
  double take_irqs(Task& t) {
    const Vcpu& v = *t.vcpu;
    if (t.irqs_off || (!v.tick_pending && v.irq_pending_ns <= 0 && v.irq_acks.empty())) return 0;
    return run_irqs(t);
  }
  double run_irqs(Task& t);
  void run_irq_acks(Vcpu& v);
  bool should_preempt(Task& t);
  void set_need_resched(Vcpu& v);
  void unwatch_all(Task& t);
  void add_interval(Sym s, Time since);

  Simulation& sim_;
  int index_;
  std::string name_;
  scenario::GuestSpec spec_;
  LockPolicies policies_;
  std::vector<std::unique_ptr<Vcpu>> vcpus_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<Slot> slots_;
  LockEventCounts counters_{};
  Profile profile_;
  std::vector<LockStat*> lock_stats_;
};

}  // namespace pvlock::sim
