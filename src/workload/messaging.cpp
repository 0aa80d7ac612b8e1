#include "workload/messaging.hpp"

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

struct MessagingParams {
  int groups = 10;
  int senders = 20;
  int receivers = 20;
  int loops = 100;
  scenario::Dist send_compute{}, send_hold{}, recv_compute{}, recv_hold{};
  int capacity = 10000;
};

using Env = sim::SimEnv;

template <class Mutex>
class Messaging final : public Workload {
 public:
  Messaging(const MessagingParams& p, sim::Guest& g) : p_(p), guest_(g) {
    const int pipes = p.groups * p.receivers;
    pipes_.reserve(static_cast<std::size_t>(pipes));
    for (int i = 0; i < pipes; ++i) {
      pipes_.push_back(std::make_unique<Pipe>());
      Pipe& pipe = *pipes_.back();
      pipe.stat.name = "messaging.pipe_mutex[" + std::to_string(i) + "]";
      g.register_lock_stat(pipe.stat);
      pipe.watch = make_lock_watch(pipe.mutex, pipe.stat.name + " (" + g.name() + ")");
    }
    for (auto& pipe : pipes_) pipe->blocked_writers.reserve(static_cast<std::size_t>(p.senders));
    received_.assign(static_cast<std::size_t>(pipes), 0);
    // Tasks are spread over the vCPUs in creation order (fork() + the scheduler's balancing).
    int next_cpu = 0;
    for (int grp = 0; grp < p.groups; ++grp) {
      for (int r = 0; r < p.receivers; ++r) {
        const int pipe = grp * p.receivers + r;
        g.create_task("receiver/" + std::to_string(pipe), next_cpu++ % g.vcpu_count(),
                      [this, pipe] { receiver(pipe); });
      }
      for (int s = 0; s < p.senders; ++s)
        g.create_task("sender/" + std::to_string(grp) + "." + std::to_string(s),
                      next_cpu++ % g.vcpu_count(), [this, grp] { sender(grp); });
    }
  }
  double score() const override {
    std::uint64_t total = 0;
    for (auto x : received_) total += x;
    return static_cast<double>(total) / guest_.sim().measured_seconds();
  }
  std::string unit() const override { return "msgs/s"; }
  void report(nlohmann::ordered_json& vm) const override {
    const double rate = score();
    const double msgs = static_cast<double>(p_.groups) * p_.senders * p_.receivers * p_.loops;
    // perf bench's "Total time" for -g groups and `loops` rounds at the measured rate.
    vm["equivalent_run_s"] = rate > 0 ? msgs / rate : 0.0;
  }

 private:
  struct alignas(64) Pipe {
    Mutex mutex;
    LockStat stat;
    sim::LockWatch watch;    // liveness watchdog: holder, waiters, last unlocker
    std::int64_t stamp = 0;  // hold stamp of the current holder (lock_stat's held_lock)
    // Protected by the mutex (plain: only touched by the holder).
    int count = 0;
    sim::Task* waiting_reader = nullptr;
    std::vector<sim::Task*> blocked_writers;
  };

  // pipe_lock()/pipe_unlock(): mutex_lock/mutex_unlock through the lock_stat wrapper.
  static void lock(Pipe& p) {
    api::lock_waiting(p.watch);
    p.stamp = stat_lock<Env>(p.mutex, p.stat);
    api::lock_acquired(p.watch);
  }
  static void unlock(Pipe& p) {
    api::lock_releasing(p.watch);
    stat_unlock<Env>(p.mutex, p.stat, p.stamp);
  }

  void sender(int grp) {
    for (;;) {
      for (int r = 0; r < p_.receivers; ++r) {
        Pipe& pipe = *pipes_[static_cast<std::size_t>(grp * p_.receivers + r)];
        api::compute(api::sample(p_.send_compute));  // syscall entry, copy from user
        for (;;) {
          lock(pipe);
          if (pipe.count < p_.capacity) break;
          // pipe_write(): full -> sleep on the pipe's wait queue until a reader drains it.
          pipe.blocked_writers.push_back(&Env::self());
          Env::prepare_block();
          unlock(pipe);
          Env::block();
        }
        api::compute(api::sample(p_.send_hold));  // copy into the pipe buffer
        ++pipe.count;
        sim::Task* reader = pipe.waiting_reader;
        pipe.waiting_reader = nullptr;
        unlock(pipe);
        if (reader != nullptr) Env::wake(reader);
        api::progress();  // one message sent (a timestamp store, no simulated time)
      }
    }
  }

  void receiver(int index) {
    Pipe& pipe = *pipes_[static_cast<std::size_t>(index)];
    for (;;) {
      api::compute(api::sample(p_.recv_compute));
      lock(pipe);
      if (pipe.count == 0) {
        // pipe_read(): empty -> wait_event on the pipe; set our state before dropping the
        // mutex so a writer's wake cannot be lost.
        pipe.waiting_reader = &Env::self();
        Env::prepare_block();
        unlock(pipe);
        Env::block();
        continue;
      }
      api::compute(api::sample(p_.recv_hold));  // copy out of the pipe buffer
      --pipe.count;
      sim::Task* writer = nullptr;
      if (!pipe.blocked_writers.empty()) {
        writer = pipe.blocked_writers.back();
        pipe.blocked_writers.pop_back();
      }
      unlock(pipe);
      if (writer != nullptr) Env::wake(writer);
      if (api::measuring()) ++received_[static_cast<std::size_t>(index)];
      api::progress();  // one message received
    }
  }

  MessagingParams p_;
  sim::Guest& guest_;
  std::vector<std::unique_ptr<Pipe>> pipes_;
  std::vector<std::uint64_t> received_;
};

scenario::Dist constant(double ns) {
  scenario::Dist d;
  d.mean = ns;
  return d;
}

}  // namespace

std::unique_ptr<Workload> make_messaging(const scenario::WorkloadSpec& spec, sim::Guest& guest) {
  static constexpr std::array<std::string_view, 11> kKnown = {
      "type",         "groups",          "senders",      "receivers",
      "loops",        "send_compute_ns", "send_hold_ns", "recv_compute_ns",
      "recv_hold_ns", "pipe_capacity",   "lock"};
  MessagingParams p;
  p.groups = static_cast<int>(scenario::param_int(spec, "groups", 10, 1, 4000));
  p.senders = static_cast<int>(scenario::param_int(spec, "senders", 20, 1, 1000));
  p.receivers = static_cast<int>(scenario::param_int(spec, "receivers", 20, 1, 1000));
  p.loops = static_cast<int>(scenario::param_int(spec, "loops", 100, 1, 1'000'000));
  // Costs from workloads.md §3 (estimates).
  p.send_compute = scenario::param_dist(spec, "send_compute_ns", constant(700));
  p.send_hold = scenario::param_dist(spec, "send_hold_ns", constant(500));
  p.recv_compute = scenario::param_dist(spec, "recv_compute_ns", constant(500));
  p.recv_hold = scenario::param_dist(spec, "recv_hold_ns", constant(400));
  p.capacity = static_cast<int>(scenario::param_int(spec, "pipe_capacity", 10000, 1, 1 << 24));
  const std::string lock = scenario::param_string(spec, "lock", "mutex", {});
  scenario::reject_unknown_params(spec, kKnown);
  std::unique_ptr<Workload> out;
  const bool found = with_lock<sim::SimEnv>(lock, [&]<class L>(const LockInfo& info) {
    if (info.kind == LockKind::spin && !info.negative_control)
      scenario::fail_at(spec.params.at("lock").where,
                        "pipe->mutex must be a sleeping lock (e.g. mutex), not " + lock);
    out = std::make_unique<Messaging<L>>(p, guest);
  });
  if (!found) scenario::fail_at(spec.where, "no lock named '" + lock + "'");
  return out;
}

}  // namespace pvlock::workload
