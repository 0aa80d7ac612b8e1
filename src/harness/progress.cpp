// SPDX-License-Identifier: GPL-2.0-only
#include "harness/progress.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::harness {

namespace {

using Clock = std::chrono::steady_clock;

// Wall seconds before the first estimate: the first moments (set-up, warm-up transients)
// say little about the speed of the rest.
constexpr double kFirstEstimateS = 1.0;
constexpr double kRedrawS = 0.25;

class ProgressSampler final : public sim::Sampler {
 public:
  ProgressSampler(const sim::Simulation& sim, const ProgressOptions& o, sim::Sampler* inner)
      : sim_(sim), o_(o), inner_(inner), t0_(Clock::now()) {}
  ~ProgressSampler() override {
    if (drawn_) fmt::print(o_.out, "\r\033[K");  // leave the terminal's line clean
  }

  void sample(sim::Time now) override {
    if (inner_ != nullptr) inner_->sample(now);
    if (o_.cancel != nullptr && o_.cancel->load(std::memory_order_relaxed)) {
      if (drawn_) fmt::print(o_.out, "\r\033[K");
      drawn_ = false;
      throw Interrupted(now, sim_.end_time());
    }
    if (o_.out == nullptr) return;
    const double wall = std::chrono::duration<double>(Clock::now() - t0_).count();
    if (wall < kFirstEstimateS || wall - last_draw_ < kRedrawS) return;
    last_draw_ = wall;
    const double end = static_cast<double>(sim_.end_time());
    const double done = std::max(static_cast<double>(now), 1.0);
    const double left_s = wall * (end - done) / done;
    check_trace(now);
    if (o_.tty) {
      fmt::print(o_.out,
                 "\r\033[Krun: {:.3f} of {:.3f} s simulated ({:.1f} %), {} elapsed, ~{} left",
                 done / 1e9, end / 1e9, 100.0 * done / end, format_wall_duration(wall),
                 format_wall_duration(left_s));
      std::fflush(o_.out);
      drawn_ = true;
    } else if (!estimated_ && wall + left_s > kLongRunS) {
      fmt::print(o_.out,
                 "pvlock: run: this run will take about {} more ({:.3f} s of simulated time at "
                 "{:.3g} simulated s per wall second); Ctrl-C stops it\n",
                 format_wall_duration(left_s), end / 1e9, done / 1e9 / wall);
      std::fflush(o_.out);
    }
    estimated_ = true;
  }

  void before_reset() override {
    if (inner_ != nullptr) inner_->before_reset();
  }

 private:
  // The trace keeps what falls in its window: project the events seen so far over the rest
  // of the window, and say so once if the file would be large.
  void check_trace(sim::Time now) {
    if (o_.tracer == nullptr || trace_warned_) return;
    const auto& w = o_.tracer->window();
    const double start = static_cast<double>(w.start);
    const double stop = std::min(static_cast<double>(sim_.end_time()), static_cast<double>(w.end));
    const double seen = std::min(static_cast<double>(now), stop) - start;
    if (seen <= 0) return;
    const double events = static_cast<double>(o_.tracer->event_count()) * (stop - start) / seen;
    const double bytes = events * kTraceBytesPerEvent;
    if (bytes < kTraceWarnBytes) return;
    trace_warned_ = true;
    fmt::print(o_.out,
               "{}pvlock: warning: at this rate the trace will hold ~{:.3g} events, a file of "
               "about {:.1f} GB (and as much memory until the run ends); --trace-window "
               "START:END keeps less\n",
               drawn_ ? "\r\033[K" : "", events, bytes / 1e9);
    drawn_ = false;
  }

  const sim::Simulation& sim_;
  ProgressOptions o_;
  sim::Sampler* inner_;
  Clock::time_point t0_;
  double last_draw_ = 0;
  bool drawn_ = false;
  bool estimated_ = false;
  bool trace_warned_ = false;
};

}  // namespace

sim::Time progress_interval(sim::Time run_end) {
  // 1 ms of simulated time (thousands of events for most machines), finer for a short run.
  return std::max<sim::Time>(1000, std::min<sim::Time>(1'000'000, run_end / 100));
}

std::unique_ptr<sim::Sampler> make_progress_sampler(const sim::Simulation& sim,
                                                    const ProgressOptions& o, sim::Sampler* inner) {
  return std::make_unique<ProgressSampler>(sim, o, inner);
}

std::string format_wall_duration(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  if (s < 60) return fmt::format("{:.0f} s", s);
  const auto t = static_cast<long long>(s + 0.5);
  if (t < 3600) return fmt::format("{} min {:02} s", t / 60, t % 60);
  return fmt::format("{} h {:02} min", t / 3600, t % 3600 / 60);
}

}  // namespace pvlock::harness
