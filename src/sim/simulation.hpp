// SPDX-License-Identifier: GPL-2.0-only
// One simulation: virtual time, the event loop, the machine (topology + cache model), the
// platform (bare metal or a host) and the guests. Single-threaded; see context.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "sim/engine/event_counts.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/resume_queue.hpp"
#include "sim/engine/time.hpp"
#include "sim/faults/faults.hpp"
#include "sim/machine/coherence.hpp"
#include "sim/machine/topology.hpp"
#include "sim/platform.hpp"
#include "sim/watchdog/watchdog.hpp"

namespace pvlock::sim {

class Guest;
struct Task;
struct Vcpu;
namespace trace {
class Tracer;
}

// A periodic observer of a run (harness/series.hpp): sample() at every interval boundary of
// simulated time and once more at the end; before_reset() right before the measured
// window's statistics restart (warm-up end), so that it can carry its running totals over.
// Sampling reads state and changes none, so a sampled run computes the same results.
class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual void sample(Time now) = 0;
  virtual void before_reset() = 0;
};

class Simulation {
 public:
  // The platform is bare metal when `platform` is null.
  explicit Simulation(const scenario::Scenario& sc, std::unique_ptr<Platform> platform = nullptr);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Set-up: a guest with `vcpus` vCPUs; on bare metal vCPU i is physical CPU i.
  Guest& add_guest(std::string name, const scenario::GuestSpec& spec, int vcpus);
  // Runs from time 0 to warmup + duration.
  void run();

  Time now() const { return now_; }
  Time measure_start() const { return measure_start_; }
  Time end_time() const { return end_; }
  bool measuring() const { return now_ >= measure_start_; }
  double measured_seconds() const { return static_cast<double>(end_ - measure_start_) * 1e-9; }
  std::uint64_t seed() const { return scenario_.run.seed; }
  const scenario::Scenario& scenario() const { return scenario_; }
  const scenario::Costs& costs() const { return scenario_.costs; }
  const Topology& topology() const { return topo_; }
  Coherence& coherence() { return coherence_; }
  Platform& platform() { return *platform_; }
  const Platform& platform() const { return *platform_; }
  EventQueue& queue() { return queue_; }
  std::vector<std::unique_ptr<Guest>>& guests() { return guests_; }
  Watchdog& watchdog() { return watchdog_; }
  const Watchdog& watchdog() const { return watchdog_; }
  Faults& faults() { return faults_; }
  const Faults& faults() const { return faults_; }
  Vcpu& vcpu(int index) { return *vcpus_[static_cast<std::size_t>(index)]; }
  int vcpu_count() const { return static_cast<int>(vcpus_.size()); }
  // The timeline tracer (sim/trace/), or null when tracing is off: every hook tests it.
  // Set before run(); not owned.
  void set_tracer(trace::Tracer* t) { tracer_ = t; }
  trace::Tracer* tracer() const { return tracer_; }
  // Set before run(); not owned. `interval` > 0.
  void set_sampler(Sampler* s, Time interval) {
    sampler_ = s;
    sample_interval_ = interval;
  }

  // ---- vCPU progress (used by guests and the platform) ---------------------------------
  // The vCPU's current context continues at `at` (any earlier pending resume is cancelled).
  void schedule_resume(Vcpu& v, Time at);
  void cancel_resume(Vcpu& v);
  // A platform's one-shot timers of a vCPU (at most kVcpuTimers kinds, `which` < that): kept
  // in the indexed queue beside the vCPU's resume, so that re-arming one moves its entry
  // instead of leaving a stale event in the main queue (where it would cost heap work and
  // stop try_advance_inline() until it came due). At `at` the platform's on_event() gets an
  // EventKind::host event with `gen` and `arg`, in the same (time, sequence) order as if it
  // had been pushed on the main queue now.
  static constexpr std::uint32_t kVcpuTimers = 3;
  void arm_vcpu_timer(Vcpu& v, std::uint32_t which, Time at, std::uint32_t gen, std::uint8_t arg);
  void cancel_vcpu_timer(Vcpu& v, std::uint32_t which);
  // Host side: the vCPU leaves / gets a physical CPU. Its running-time clock stops while
  // it is off, so waits measured in running time stretch.
  void vcpu_stop(Vcpu& v);
  void vcpu_start(Vcpu& v);
  // Advances time by dt inside the running fiber if no event comes first (no switch).
  bool try_advance_inline(Time dt) {
    if (!can_advance_inline(dt)) return false;
    now_ += dt;
    ++inline_steps_;
    return true;
  }
  // Whether try_advance_inline(dt) would advance.
  bool can_advance_inline(Time dt) const {
    return queue_.next_time() > now_ + dt && resumes_.top_time() > now_ + dt;
  }

  // ---- Statistics -----------------------------------------------------------------------
  // Events dispatched, every kind (stale ones excluded; engine/event_counts.hpp), and time
  // steps taken inside a fiber without a switch.
  std::uint64_t events() const { return counts_.dispatched(); }
  std::uint64_t stale_events() const { return counts_.stale(); }
  const EventCounts& event_counts() const { return counts_; }
  // CPU time of the thread that ran run() (excludes set-up): the honest speed figure on a
  // shared machine, where wall time also counts other processes.
  double run_cpu_seconds() const { return run_cpu_s_; }
  std::uint64_t inline_steps() const { return inline_steps_; }

 private:
  void dispatch(const Event& e);
  void dispatch_slot(std::uint32_t slot, std::uint64_t seq);
  static constexpr std::uint32_t kSlotsPerVcpu = 1 + kVcpuTimers;  // resume, timers
  struct TimerSlot {
    std::uint32_t gen = 0;
    std::uint8_t arg = 0;
  };

  scenario::Scenario scenario_;
  Topology topo_;
  Coherence coherence_;
  EventQueue queue_;
  ResumeQueue resumes_;  // slots: vCPU index * kSlotsPerVcpu + 0 (resume) or 1 + timer
  std::vector<TimerSlot> timer_slots_;  // per slot: what an armed timer delivers
  std::unique_ptr<Platform> platform_;
  std::vector<std::unique_ptr<Guest>> guests_;
  std::vector<Vcpu*> vcpus_;
  Watchdog watchdog_{*this};
  Faults faults_{*this};
  Time now_ = 0;
  Time measure_start_ = 0;
  Time end_ = 0;
  EventCounts counts_;
  double run_cpu_s_ = 0;
  std::uint64_t inline_steps_ = 0;
  bool stop_ = false;
  trace::Tracer* tracer_ = nullptr;
  Sampler* sampler_ = nullptr;
  Time sample_interval_ = 0;
  Time last_sample_ = 0;
};

}  // namespace pvlock::sim
