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

struct TaskStats {
  std::uint64_t acquisitions = 0;
  std::int64_t max_wait_ns = 0;
  std::int64_t last_acquire = 0;
  bool reader = false;
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
    bool first = true;
    std::int64_t last = 0;
    for (const TaskStats& s : stats_) {
      native::ThreadStats ts;
      ts.acquisitions = s.acquisitions;
      ts.max_wait_ns = s.max_wait_ns;
      ts.reader = s.reader;
      r.per_thread.push_back(ts);
      r.max_wait_ns = std::max(r.max_wait_ns, s.max_wait_ns);
      last = std::max(last, s.last_acquire);
      if (s.reader) {
        r.read_acquisitions += s.acquisitions;
        continue;
      }
      r.acquisitions += s.acquisitions;
      r.min_per_thread = first ? s.acquisitions : std::min(r.min_per_thread, s.acquisitions);
      r.max_per_thread = std::max(r.max_per_thread, s.acquisitions);
      first = false;
    }
    // Lost updates of the protected counter are violations too.
    const std::uint64_t counted = arena_->counter.raw();
    r.violations += counted > r.acquisitions ? counted - r.acquisitions : r.acquisitions - counted;
    r.starvation = r.max_per_thread / 2 > r.min_per_thread;
    // Liveness: somebody must have acquired the lock in the last stretch of the run.
    const std::int64_t end = guest_.sim().end_time();
    const std::int64_t window = std::max<std::int64_t>(end / 10, 3 * p_.long_hold_ns);
    r.stuck = last < end - window;
    r.counters = guest_.counters();
    return r;
  }
  double score() const override {
    std::uint64_t total = 0;
    for (const TaskStats& s : stats_) total += s.acquisitions;
    return static_cast<double>(total) / (static_cast<double>(guest_.sim().end_time()) * 1e-9);
  }
  std::string unit() const override { return "acquisitions/s"; }
  void report(nlohmann::ordered_json& vm) const override {
    output::torture_outcome_json(vm, result());
  }

 private:
  std::int64_t hold_ns() {
    if (api::self().rng.below(long_one_in_) == 0) return p_.long_hold_ns;
    return api::sample(p_.hold);
  }
  void outside_work() {
    const auto pauses = static_cast<std::int64_t>(api::self().rng.below(32));
    api::compute(
        static_cast<std::int64_t>(static_cast<double>(pauses) * guest_.sim().costs().pause_ns));
  }
  void write_loop(int id) {
    TaskStats& st = stats_[static_cast<std::size_t>(id)];
    const auto me = static_cast<std::uint32_t>(id + 1);
    for (;;) {
      const std::int64_t t0 = api::now();
      if (p_.irqs_off) api::irq_disable();
      api::set_symbol(sim::Sym::lock_ops);
      api::lock_waiting(watch_);
      arena_->lock.lock();
      api::lock_acquired(watch_);
      api::set_symbol(sim::Sym::workload);
      st.max_wait_ns = std::max(st.max_wait_ns, api::now() - t0);
      if (arena_->owner.exchange(me) != 0) ++violations_;
      if (arena_->readers.load() != 0) ++violations_;
      // A read-modify-write split across the hold: a second holder makes an update vanish.
      const std::uint64_t c = arena_->counter.load();
      api::compute(hold_ns());
      arena_->counter.store(c + 1);
      ++st.acquisitions;  // no simulated time passes between the store and this count
      st.last_acquire = api::now();
      if (arena_->owner.exchange(0) != me) ++violations_;
      api::set_symbol(sim::Sym::lock_ops);
      api::lock_releasing(watch_);
      arena_->lock.unlock();
      api::set_symbol(sim::Sym::workload);
      if (p_.irqs_off) api::irq_enable();
      api::progress();
      outside_work();
    }
  }
  void read_loop(int id) {
    if constexpr (requires(L & l) {
                    l.lock_shared();
                    l.unlock_shared();
                  }) {
      TaskStats& st = stats_[static_cast<std::size_t>(id)];
      for (;;) {
        const std::int64_t t0 = api::now();
        api::set_symbol(sim::Sym::lock_ops);
        api::lock_waiting(watch_);
        arena_->lock.lock_shared();
        api::self().waiting_for = nullptr;  // readers share it: no holder to record
        api::set_symbol(sim::Sym::workload);
        st.max_wait_ns = std::max(st.max_wait_ns, api::now() - t0);
        arena_->readers.fetch_add(1);
        if (arena_->owner.load() != 0) ++violations_;
        api::compute(api::sample(p_.hold));
        if (arena_->owner.load() != 0) ++violations_;
        arena_->readers.fetch_sub(1);
        ++st.acquisitions;
        st.last_acquire = api::now();
        api::set_symbol(sim::Sym::lock_ops);
        arena_->lock.unlock_shared();
        api::set_symbol(sim::Sym::workload);
        api::progress();
        outside_work();
      }
    } else {
      (void)id;
    }
  }

  // The lock and the data it protects, each on its own line (simulated memory).
  struct alignas(64) Arena {
    alignas(64) L lock;
    alignas(64) sim::SimAtomic<std::uint32_t> owner{};
    alignas(64) sim::SimAtomic<std::uint32_t> readers{};
    alignas(64) sim::SimAtomic<std::uint64_t> counter{};
  };
  TortureParams p_;
  sim::Guest& guest_;
  int writers_ = 0;
  int readers_ = 0;
  std::uint64_t long_one_in_ = 1;
  std::unique_ptr<Arena> arena_ = std::make_unique<Arena>();
  sim::LockWatch watch_ =
      make_lock_watch(arena_->lock, std::string(L::kName) + " of torture (" + guest_.name() + ")");
  std::vector<TaskStats> stats_;
  std::uint64_t violations_ = 0;
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
