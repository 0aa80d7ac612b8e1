// SPDX-License-Identifier: GPL-2.0-only
#include "sim/simulation.hpp"

#include <time.h>

#include <stdexcept>

#include "sim/bare_metal.hpp"
#include "sim/context.hpp"
#include "sim/guest/guest.hpp"
#include "sim/invariant.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

namespace {
Time ms_to_ns(double ms) { return static_cast<Time>(ms * 1e6 + 0.5); }
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

Simulation::Simulation(const scenario::Scenario& sc, std::unique_ptr<Platform> platform)
    : scenario_(sc),
      topo_(sc.machine),
      coherence_(topo_, scenario_.costs),
      queue_(8192),
      platform_(platform ? std::move(platform) : std::make_unique<BareMetal>(sc.costs)) {
  measure_start_ = ms_to_ns(sc.run.warmup_ms);
  end_ = measure_start_ + ms_to_ns(sc.run.duration_ms);
}

Simulation::~Simulation() {
  Context saved = tl_ctx;
  tl_ctx = Context{};  // fibers unwinding below must not simulate anything
  guests_.clear();
  tl_ctx = saved.sim == this ? Context{} : saved;
}

Guest& Simulation::add_guest(std::string name, const scenario::GuestSpec& spec, int vcpus) {
  const int first = static_cast<int>(vcpus_.size());
  guests_.push_back(std::make_unique<Guest>(*this, static_cast<int>(guests_.size()),
                                            std::move(name), spec, vcpus, first));
  Guest& g = *guests_.back();
  for (int i = 0; i < vcpus; ++i) vcpus_.push_back(&g.vcpu(i));
  return g;
}

void Simulation::schedule_resume(Vcpu& v, Time at) {
  ++v.gen;
  v.resume_at = at;
  const auto slot = static_cast<std::uint32_t>(v.index) * kSlotsPerVcpu;
  // A resume after the end never happens.
  if (at > end_)
    resumes_.erase(slot);
  else
    resumes_.set(slot, at, queue_.take_seq(), now_);
}

void Simulation::cancel_resume(Vcpu& v) {
  ++v.gen;
  v.resume_at = kNever;
  resumes_.erase(static_cast<std::uint32_t>(v.index) * kSlotsPerVcpu);
}

void Simulation::arm_vcpu_timer(Vcpu& v, std::uint32_t which, Time at, std::uint32_t gen,
                                std::uint8_t arg) {
  const std::uint32_t slot = static_cast<std::uint32_t>(v.index) * kSlotsPerVcpu + 1 + which;
  // The sequence number is taken even for a timer after the end (one that never fires), as a
  // push on the main queue would take it.
  const std::uint64_t seq = queue_.take_seq();
  if (at > end_) {
    resumes_.erase(slot);
    return;
  }
  timer_slots_[slot] = TimerSlot{gen, arg};
  resumes_.set(slot, at, seq, now_);
}

void Simulation::cancel_vcpu_timer(Vcpu& v, std::uint32_t which) {
  resumes_.erase(static_cast<std::uint32_t>(v.index) * kSlotsPerVcpu + 1 + which);
}

void Simulation::vcpu_stop(Vcpu& v) {
  if (!v.running) return;
  PVLOCK_INVARIANT(now_ >= v.run_since, "a vCPU stops after it started");
  v.run_accum += now_ - v.run_since;
  v.running = false;
  cancel_resume(v);
  if (tracer_ != nullptr) tracer_->vcpu_update(v, now_);
}

void Simulation::vcpu_start(Vcpu& v) {
  if (v.running) return;
  v.running = true;
  v.run_since = now_;
  if (tracer_ != nullptr) tracer_->vcpu_update(v, now_);
  // Whatever the vCPU was doing continues; a wait re-arms itself from its running-time
  // target, an idle or halted vCPU stays halted until an interrupt or kick.
  if (!v.halted) schedule_resume(v, now_);
}

void Simulation::run() {
  const Context saved = tl_ctx;
  const double cpu0 = thread_cpu_seconds();
  tl_ctx = Context{this, nullptr};
  if (vcpus_.size() * kSlotsPerVcpu > ResumeQueue::kMaxSlots)
    throw std::invalid_argument("too many vCPUs for the simulator's resume queue");
  resumes_.resize(vcpus_.size() * kSlotsPerVcpu);
  timer_slots_.assign(vcpus_.size() * kSlotsPerVcpu, TimerSlot{});
  if (tracer_ != nullptr) tracer_->attach(*this);  // before the host's first switches
  platform_->attach(*this);
  queue_.push(measure_start_, EventKind::warmup_end, 0, 0);
  queue_.push(end_, EventKind::run_end, 0, 0);
  last_sample_ = 0;
  if (sampler_ != nullptr && sample_interval_ < end_)
    queue_.push(sample_interval_, EventKind::sample, 0, 0);
  for (auto& g : guests_) g->start();
  faults_.attach();
  watchdog_.arm();
  stop_ = false;
  while (!stop_ && !(queue_.empty() && resumes_.empty())) {
    // The earlier of the two queues by (time, sequence): one total order.
    const bool resume =
        !resumes_.empty() &&
        (queue_.empty() || resumes_.top_time() < queue_.next_time() ||
         (resumes_.top_time() == queue_.next_time() && resumes_.top_seq() < queue_.top_seq()));
    if (resume) {
      PVLOCK_INVARIANT(resumes_.top_time() >= now_, "simulated time never runs backwards");
      now_ = resumes_.top_time();
      const std::uint64_t seq = resumes_.top_seq();
      dispatch_slot(resumes_.pop(), seq);
      continue;
    }
    const Event e = queue_.pop();
    PVLOCK_INVARIANT(e.time >= now_, "simulated time never runs backwards");
    now_ = e.time;
    dispatch(e);
  }
  if (!stop_ && watchdog_.limit() > 0) watchdog_.all_blocked();  // nothing left to happen
  // The last interval may be shorter than the others (or cut by the watchdog).
  if (sampler_ != nullptr && last_sample_ < now_) sampler_->sample(now_);
  for (auto& g : guests_) g->finish_stats();
  if (tracer_ != nullptr) tracer_->finish(now_);
  tl_ctx = saved;
  run_cpu_s_ = thread_cpu_seconds() - cpu0;
}

void Simulation::dispatch_slot(std::uint32_t slot, std::uint64_t seq) {
  Vcpu& v = vcpu(static_cast<int>(slot / kSlotsPerVcpu));
  if (const std::uint32_t which = slot % kSlotsPerVcpu; which != 0) {
    const TimerSlot& t = timer_slots_[slot];
    dispatch(Event{now_, seq, static_cast<std::uint32_t>(v.index), t.gen, EventKind::host, t.arg});
    return;
  }
  v.resume_at = kNever;
  // Guest code runs only on a vCPU the host has on a pCPU; vcpu_start() re-arms the
  // resume of one that was stopped (e.g. the guests' first resumes, before the host
  // scheduler placed them).
  if (!v.running) {
    ++counts_.stale_resumes;
    return;
  }
  counts_.add(EventKind::vcpu_resume);
  v.guest->dispatch(v);
}

void Simulation::dispatch(const Event& e) {
  switch (e.kind) {
    case EventKind::vcpu_resume:  // vCPU resumes live in resumes_: a leftover entry
      ++counts_.stale_resumes;
      return;
    case EventKind::vcpu_tick: {
      counts_.add(e.kind);
      Vcpu& v = vcpu(static_cast<int>(e.target));
      v.guest->tick(v);
      return;
    }
    case EventKind::warmup_end:
      counts_.add(e.kind);
      if (sampler_ != nullptr) sampler_->before_reset();
      for (auto& g : guests_) g->reset_stats();
      platform_->measure_start();
      return;
    case EventKind::run_end:
      counts_.add(e.kind);
      stop_ = true;
      return;
    case EventKind::sample:
      counts_.add(e.kind);
      sampler_->sample(now_);
      last_sample_ = now_;
      if (now_ + sample_interval_ < end_)
        queue_.push(now_ + sample_interval_, EventKind::sample, 0, 0);
      return;
    case EventKind::watchdog:
      counts_.add(e.kind);
      if (watchdog_.check()) stop_ = true;
      return;
    case EventKind::fault:
      counts_.add(e.kind);
      faults_.on_event(e);
      return;
    case EventKind::timer: {  // a guest task's hrtimer (Guest::sleep): vCPU index, task id
      counts_.add(e.kind);
      Vcpu& v = vcpu(static_cast<int>(e.target));
      v.guest->timer_expired(v, e.gen);
      return;
    }
    case EventKind::host:
      if (!platform_->on_event(e)) {
        ++counts_.stale_host;
        return;
      }
      counts_.add(e.kind);
      counts_.add_host(e.arg);
      return;
  }
}

}  // namespace pvlock::sim
