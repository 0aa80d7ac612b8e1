// SPDX-License-Identifier: GPL-2.0-only
#include "workload/lockloop.hpp"

#include <array>
#include <string_view>
#include <vector>

#include "pvlock/lock/registry.hpp"
#include "pvlock/stat/lock_stat.hpp"
#include "scenario/parse.hpp"
#include "sim/guest/sim_env.hpp"
#include "workload/guest_api.hpp"
#include "workload/lock_watch.hpp"

namespace pvlock::workload {
namespace {

struct LockLoopParams {
  int tasks_per_vcpu = 1;
  scenario::Dist compute{};
  scenario::Dist hold{};
  bool irqs_off = false;
  std::int64_t bytes_per_op = 0;  // > 0: score in MB/s (fio's bandwidth) instead of ops/s
};

template <class L>
class LockLoop final : public Workload {
 public:
  LockLoop(const LockLoopParams& p, sim::Guest& g) : p_(p), guest_(g) {
    lock_->stat.name = "lockloop.lock";
    g.register_lock_stat(lock_->stat);
    stat_wait_lock(lock_->lock, lock_->stat);
    const int n = g.vcpu_count() * p.tasks_per_vcpu;
    ops_.assign(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      const int cpu = i % g.vcpu_count();
      g.create_task("lockloop/" + std::to_string(i), cpu, [this, i] { body(i); });
    }
  }
  double score() const override {
    std::uint64_t total = 0;
    for (auto x : ops_) total += x;
    const double ops = static_cast<double>(total) / guest_.sim().measured_seconds();
    return p_.bytes_per_op > 0 ? ops * static_cast<double>(p_.bytes_per_op) / 1e6 : ops;
  }
  std::string unit() const override { return p_.bytes_per_op > 0 ? "MB/s" : "ops/s"; }
  std::optional<double> done() const override {
    const double ops = static_cast<double>(all_ops_);
    return p_.bytes_per_op > 0 ? ops * static_cast<double>(p_.bytes_per_op) / 1e6 : ops;
  }
  void report(nlohmann::ordered_json& vm) const override {
    std::uint64_t total = 0, lo = ~std::uint64_t{0}, hi = 0;
    for (auto x : ops_) {
      total += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    vm["ops"] = total;
    vm["per_task"] = {{"min", ops_.empty() ? 0 : lo}, {"max", hi}};
  }

 private:
  void body(int i) {
    for (;;) {
      api::compute(api::sample(p_.compute));
      if (p_.irqs_off) api::irq_disable();
      api::set_symbol(sim::Sym::lock_ops);
      // Through the lock_stat wrapper (LOCK_CONTENDED): spin_lock, mutex_lock or down_write.
      api::lock_waiting(watch_);
      const std::int64_t stamp = stat_lock<sim::SimEnv>(lock_->lock, lock_->stat);
      api::lock_acquired(watch_);
      api::set_symbol(sim::Sym::workload);
      api::compute(api::sample(p_.hold));
      api::set_symbol(sim::Sym::lock_ops);
      api::lock_releasing(watch_);
      stat_unlock<sim::SimEnv>(lock_->lock, lock_->stat, stamp);
      api::set_symbol(sim::Sym::workload);
      if (p_.irqs_off) api::irq_enable();
      api::progress();
      ++all_ops_;
      if (api::measuring()) ++ops_[static_cast<std::size_t>(i)];
    }
  }

  // Lock objects get their own cache lines, as a kernel object's lock would not share with
  // unrelated hot data.
  struct alignas(64) Holder {
    L lock;
    LockStat stat;
  };
  LockLoopParams p_;
  sim::Guest& guest_;
  std::unique_ptr<Holder> lock_ = std::make_unique<Holder>();
  sim::LockWatch watch_ =
      make_lock_watch(lock_->lock, std::string(L::kName) + " of lockloop (" + guest_.name() + ")");
  std::vector<std::uint64_t> ops_;  // measured window, per task
  std::uint64_t all_ops_ = 0;       // since time 0
};

}  // namespace

std::unique_ptr<Workload> make_lockloop(const scenario::WorkloadSpec& spec, sim::Guest& guest) {
  static constexpr std::array<std::string_view, 7> kKnown = {
      "tasks_per_vcpu", "compute_ns", "hold_ns", "irqs_off", "type", "lock", "bytes_per_op"};
  LockLoopParams p;
  p.tasks_per_vcpu = static_cast<int>(scenario::param_int(spec, "tasks_per_vcpu", 1, 1, 64));
  scenario::Dist c;
  c.mean = 500;
  scenario::Dist h;
  h.mean = 100;
  p.compute = scenario::param_dist(spec, "compute_ns", c);
  p.hold = scenario::param_dist(spec, "hold_ns", h);
  p.irqs_off = scenario::param_bool(spec, "irqs_off", false);
  p.bytes_per_op = scenario::param_int(spec, "bytes_per_op", 0, 0, 1 << 30);
  // The lock the tasks fight over: the guest's spinlock unless the workload names another
  // kernel lock (fio's inode rwsem).
  const std::string lock = scenario::param_string(spec, "lock", guest.lock_name, {});
  scenario::reject_unknown_params(spec, kKnown);
  std::unique_ptr<Workload> out;
  const bool found = with_lock<sim::SimEnv>(
      lock, [&]<class L>(const LockInfo&) { out = std::make_unique<LockLoop<L>>(p, guest); });
  if (!found) {
    std::string names;
    for (const LockInfo& i : lock_infos<sim::SimEnv>()) {
      names += ' ';
      names.append(i.name);
    }
    scenario::fail_at(spec.params.at("lock").where, "no lock named '" + lock + "'; locks:" + names);
  }
  return out;
}

}  // namespace pvlock::workload
