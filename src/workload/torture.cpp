// SPDX-License-Identifier: GPL-2.0-only
#include "workload/torture.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "output/counters_json.hpp"
#include "output/torture_json.hpp"
#include "pvlock/lock/knobs.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"
#include "sim/guest/sim_env.hpp"
#include "torture/body.hpp"
#include "workload/guest_api.hpp"
#include "workload/lock_watch.hpp"

namespace pvlock::workload {
namespace {

struct TortureParams {
  int tasks_per_vcpu = 1;
  int readers = 0;
  scenario::Dist hold{};
  std::int64_t long_hold_ns = 1'000'000;
  std::int64_t long_hold_one_in = 0;
  bool irqs_off = false;  // writers take the lock as spin_lock_irq (locktorture's spin_lock_irq)
};

// Implemented by every Torture<L>, so the runner can get the verdict without the lock type.
class TortureReport {
 public:
  virtual ~TortureReport() = default;
  virtual native::TortureResult result() const = 0;
};

template <class L>
class Torture final : public Workload, public TortureReport {
 public:
  Torture(const TortureParams& p, sim::Guest& g, bool rw) : p_(p), guest_(g) {
    writers_ = g.vcpu_count() * p.tasks_per_vcpu;
    readers_ = rw ? p.readers : 0;
    long_one_in_ = p.long_hold_one_in > 0 ? static_cast<std::uint64_t>(p.long_hold_one_in)
                                          : 2000u * static_cast<std::uint64_t>(writers_);
    stats_.resize(static_cast<std::size_t>(writers_ + readers_));
    last_acquire_.resize(stats_.size());
    for (int i = 0; i < writers_ + readers_; ++i) {
      const int cpu = i % g.vcpu_count();
      const bool reader = i >= writers_;
      stats_[static_cast<std::size_t>(i)].reader = reader;
      g.create_task((reader ? "reader/" : "writer/") + std::to_string(i), cpu,
                    [this, i, reader] { reader ? read_loop(i) : write_loop(i); });
    }
  }

  native::TortureResult result() const override {
    native::TortureResult r;
    r.lock = guest_.lock_name;
    r.threads = writers_;
    r.readers = readers_;
    r.duration_s = static_cast<double>(guest_.sim().end_time()) * 1e-9;
    r.violations = violations_;
    torture::summarize(r, stats_, arena_->counter.raw(), true);
    std::int64_t last = 0;
    for (const std::int64_t t : last_acquire_) last = std::max(last, t);
    // Liveness: somebody must have acquired the lock in the last stretch of the run.
    const std::int64_t end = guest_.sim().end_time();
    const std::int64_t window = std::max<std::int64_t>(end / 10, 3 * p_.long_hold_ns);
    r.stuck = last < end - window;
    r.counters = guest_.counters();
    return r;
  }
  double score() const override {
    std::uint64_t total = 0;
    for (const native::ThreadStats& s : stats_) total += s.acquisitions;
    return static_cast<double>(total) / (static_cast<double>(guest_.sim().end_time()) * 1e-9);
  }
  std::string unit() const override { return "acquisitions/s"; }
  void report(nlohmann::ordered_json& vm) const override {
    output::torture_outcome_json(vm, result());
  }

 private:
  // The simulator's world of the torture body (see torture/body.hpp).
  class World {
   public:
    World(const TortureParams& p, sim::Guest& g, sim::LockWatch& watch,
          const std::uint64_t& long_one_in, std::uint64_t& violations)
        : p_(p), guest_(g), watch_(watch), long_one_in_(long_one_in), violations_(violations) {}
    static bool running() { return true; }  // the simulation ends its tasks
    static std::int64_t now() { return api::now(); }
    static std::uint64_t below(std::uint64_t n) { return api::self().rng.below(n); }
    static void hold(std::int64_t ns) { api::compute(ns); }
    void pause(std::uint64_t n) const {
      api::compute(
          static_cast<std::int64_t>(static_cast<double>(n) * guest_.sim().costs().pause_ns));
    }
    std::int64_t hold_ns() const { return api::sample(p_.hold); }
    std::int64_t long_hold_ns() const { return p_.long_hold_ns; }
    std::uint64_t long_one_in() const { return long_one_in_; }
    void violation() { ++violations_; }
    void lock_begin(bool exclusive) {
      if (exclusive && p_.irqs_off) api::irq_disable();
      api::set_symbol(sim::Sym::lock_ops);
      api::lock_waiting(watch_);
    }
    void lock_end(bool exclusive) {
      if (exclusive)
        api::lock_acquired(watch_);
      else
        api::self().waiting_for = nullptr;  // readers share it: no holder to record
      api::set_symbol(sim::Sym::workload);
    }
    void unlock_begin(bool exclusive) {
      api::set_symbol(sim::Sym::lock_ops);
      if (exclusive) api::lock_releasing(watch_);
    }
    void unlock_end(bool exclusive) {
      api::set_symbol(sim::Sym::workload);
      if (exclusive && p_.irqs_off) api::irq_enable();
      api::progress();
    }

   private:
    const TortureParams& p_;
    sim::Guest& guest_;
    sim::LockWatch& watch_;
    const std::uint64_t& long_one_in_;  // set by the constructor's body
    std::uint64_t& violations_;
  };

  void write_loop(int id) {
    const auto i = static_cast<std::size_t>(id);
    torture::writer_loop(*arena_, static_cast<std::uint32_t>(id + 1), stats_[i], last_acquire_[i],
                         world_);
  }
  void read_loop(int id) {
    const auto i = static_cast<std::size_t>(id);
    torture::reader_loop(*arena_, stats_[i], last_acquire_[i], world_);
  }

  TortureParams p_;
  sim::Guest& guest_;
  int writers_ = 0;
  int readers_ = 0;
  std::uint64_t long_one_in_ = 1;
  std::unique_ptr<torture::Arena<sim::SimEnv, L>> arena_ =
      std::make_unique<torture::Arena<sim::SimEnv, L>>();
  sim::LockWatch watch_ =
      make_lock_watch(arena_->lock, std::string(L::kName) + " of torture (" + guest_.name() + ")");
  std::vector<native::ThreadStats> stats_;
  std::vector<std::int64_t> last_acquire_;
  std::uint64_t violations_ = 0;
  World world_{p_, guest_, watch_, long_one_in_, violations_};
};

TortureParams read_params(const scenario::WorkloadSpec& spec) {
  static constexpr std::array<std::string_view, 7> kKnown = {
      "tasks_per_vcpu",   "readers",  "hold_ns", "long_hold_ns",
      "long_hold_one_in", "irqs_off", "type"};
  TortureParams p;
  p.tasks_per_vcpu = static_cast<int>(scenario::param_int(spec, "tasks_per_vcpu", 1, 1, 64));
  p.readers = static_cast<int>(scenario::param_int(spec, "readers", 0, 0, 4096));
  p.hold = scenario::param_dist(spec, "hold_ns", scenario::Dist{});
  p.long_hold_ns = scenario::param_int(spec, "long_hold_ns", 1'000'000, 0, 1'000'000'000);
  p.long_hold_one_in = scenario::param_int(spec, "long_hold_one_in", 0, 0, 1'000'000'000);
  p.irqs_off = scenario::param_bool(spec, "irqs_off", false);
  scenario::reject_unknown_params(spec, kKnown);
  return p;
}

template <class F>
void with_torture(const TortureParams& p, sim::Guest& g, F&& f) {
  with_lock<sim::SimEnv>(g.lock_name, [&]<class L>(const LockInfo& info) {
    f(std::make_unique<Torture<L>>(p, g, info.kind == LockKind::rw));
  });
}

}  // namespace

std::unique_ptr<Workload> make_torture(const scenario::WorkloadSpec& spec, sim::Guest& guest) {
  std::unique_ptr<Workload> out;
  with_torture(read_params(spec), guest, [&](auto w) { out = std::move(w); });
  return out;
}

std::optional<native::TortureResult> torture_result(const Workload& w) {
  if (const auto* t = dynamic_cast<const TortureReport*>(&w)) return t->result();
  return std::nullopt;
}

}  // namespace pvlock::workload
