// SPDX-License-Identifier: GPL-2.0-only
// The liveness watchdog: a run whose lock workload stops making progress must end loudly
// (exit 3 with a diagnostic), never look merely "slow".
//
// Progress is per task, as the kernel's soft-lockup and hung-task detectors are per CPU and
// per task: a workload reports each completed operation (a lock acquisition/release pair)
// through progress(). A watched task that completes none for the limit is stuck. Per task
// rather than "no task at all", because a lost wake-up in pvqspinlock strands only the queue
// (its halted head and everyone behind it) while newcomers keep stealing the lock.
//
// Waiting for a CPU is not being stuck. The limit counts only the time a task could have
// progressed: its own vCPU's steal time (runnable but off its pCPU), its own time on its
// vCPU's run queue (runnable while the vCPU runs another task), and the time the task it
// waits behind (the lock's holder, the queue head of a queued lock, the woken waiter of a
// sleeping lock) spent so, are left out: of the host's preemptions, only check periods
// in which that task never got a pCPU; of the guest's run queues, all of its time on one.
// A vCPU halted in pv_wait or a task asleep in schedule() is blocked, and its time counts.
//
// The check is an event every limit/4 of simulated time (the hot path only stores a
// timestamp per operation). When it fires, the run stops and a LivenessReport describes
// each stuck task: the lock it waits for, what it is doing (spinning where, halted in
// pv_wait with IRQs on/off, its queue node's PV state, descheduled, asleep), the lock's
// holder, last locker and last unlocker, the lock word, and the last simulator events.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/watchdog/lock_watch.hpp"
#include "sim/watchdog/trace_ring.hpp"

namespace pvlock::sim {

class Simulation;
struct Task;

struct StuckTask {
  std::string task;        // "vm0: lockloop/3"
  int vcpu = 0;            // in its guest
  std::string lock = "-";  // the lock it waits for, "-" if none is known
  std::string state;
  std::string holder;
  std::string last_locker;
  std::string last_unlocker;
  std::string lock_word;
  Time no_progress_since = 0;
  Time host_wait = 0;               // of the time since, how much it waited for a CPU (not counted)
  bool queue_head = false;          // listed first: the task everyone else waits behind
  std::vector<std::string> events;  // the latest ring events about its vCPU
};

struct LivenessReport {
  Time at = 0;
  Time limit = 0;
  std::string reason;
  std::vector<StuckTask> tasks;
  std::vector<std::string> events;  // the latest events overall, oldest first
  std::string text() const;
  nlohmann::ordered_json json() const;
};

class Watchdog {
 public:
  explicit Watchdog(Simulation& sim) : sim_(sim) {}

  // Called by Simulation::run before the loop: schedules the first check if enabled.
  void arm();
  Time limit() const { return limit_; }
  // The periodic check (EventKind::watchdog). True if the run must stop.
  bool check();
  // The event queues ran dry before the end: every vCPU waits for something that will
  // never come.
  void all_blocked();
  const std::optional<LivenessReport>& report() const { return report_; }
  TraceRing& trace() { return trace_; }

  // ---- Workload side (task fibers); allocation-free ------------------------------------------
  void progress(Task& t);
  void waiting(Task& t, const LockWatch& w) { t_waiting(t, &w); }
  void acquired(Task& t, LockWatch& w);
  void released(Task& t, LockWatch& w);

 private:
  static void t_waiting(Task& t, const LockWatch* w);
  void fire(std::string reason, bool all_tasks);
  // Adds each watched task's host wait since the previous check.
  void account_host_wait(Time now);
  Time stalled_for(const Task& t, Time now) const;
  StuckTask describe(const Task& t) const;
  std::string task_name(const Task* t) const;
  std::string vcpu_name(int global_index);
  std::string event_line(const TraceRecord& e);

  Simulation& sim_;
  Time limit_ = 0;
  Time period_ = 0;
  Time last_check_ = 0;
  std::vector<std::int64_t> steal_at_check_;  // per vCPU (global index)
  std::vector<Time> steal_delta_;             // scratch of account_host_wait()
  std::vector<const Task*> heads_;            // scratch: one guest's queue heads
  std::vector<const Task*> woken_;            // scratch: its woken waiters queued in the period
  TraceRing trace_;
  std::optional<LivenessReport> report_;
};

}  // namespace pvlock::sim
