// SPDX-License-Identifier: GPL-2.0-only
#include "sim/watchdog/watchdog.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "pvlock/lock/qspinlock_node.hpp"
#include "sim/faults/faults.hpp"
#include "sim/guest/guest.hpp"
#include "sim/guest/sim_env.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {

namespace {

std::string ms(Time ns) { return fmt::format("{:.3f} ms", static_cast<double>(ns) * 1e-6); }

constexpr std::size_t kEventsShown = 24;

// The queue node this vCPU is using, if its guest runs a qspinlock.
const qspin::Node<SimEnv>* current_node(Guest& g, int cpu) {
  if (g.lock_name != "pvqspinlock" && g.lock_name != "qspinlock") return nullptr;
  auto& nodes = g.per_cpu<qspin::PerCpuNodes<SimEnv>>(cpu).nodes;
  const std::uint32_t used = nodes[0].count;
  if (used == 0) return nullptr;
  return &nodes[std::min<std::uint32_t>(used, qspin::kMaxNodes) - 1];
}

// Its MCS and PV state.
std::string node_state(Guest& g, int cpu) {
  const qspin::Node<SimEnv>* np = current_node(g, cpu);
  if (np == nullptr) return {};
  const auto& n = *np;
  const std::uint32_t used = g.per_cpu<qspin::PerCpuNodes<SimEnv>>(cpu).nodes[0].count;
  std::string s = fmt::format("queue node {}: mcs locked={}", used - 1, n.locked.raw());
  if (g.lock_name == "pvqspinlock") {
    switch (n.state.raw()) {
      case qspin::kVcpuRunning:
        s += ", pv state running";
        break;
      case qspin::kVcpuHalted:
        s += ", pv state halted";
        break;
      case qspin::kVcpuHashed:
        s += ", pv state hashed (lock in the PV hash, _Q_SLOW_VAL)";
        break;
      default:
        s += fmt::format(", pv state {}", n.state.raw());
    }
  }
  return s;
}

std::string role(int spin_site) {
  if (spin_site == static_cast<int>(SpinSite::pv_wait_head_or_lock) ||
      spin_site == static_cast<int>(SpinSite::qspinlock_head))
    return "queue head";
  if (spin_site == static_cast<int>(SpinSite::pv_wait_node) ||
      spin_site == static_cast<int>(SpinSite::qspinlock_node))
    return "queued behind a predecessor";
  return {};
}

// The head of its lock's queue: spinning at a head site, or halted in pv_wait_node() with
// the MCS lock passed to it meanwhile.
bool is_queue_head(Guest& g, const Task& t) {
  if (role(t.spin_site) == "queue head") return true;
  const qspin::Node<SimEnv>* node = current_node(g, t.vcpu->id);
  return node != nullptr && node->locked.raw() != 0;
}

}  // namespace

void Watchdog::arm() {
  trace_.resize(static_cast<std::size_t>(sim_.vcpu_count()));
  const auto& run = sim_.scenario().run;
  if (!(run.watchdog_ms > 0)) return;
  const double total_ms = run.warmup_ms + run.duration_ms;
  // Half the run, so that a hang in a short run is still caught, but never so short that
  // an ordinary stall (a host time slice, a long hold) would look like a hang.
  constexpr double kMinAutoLimitMs = 10;
  const double limit_ms = std::min(run.watchdog_ms, std::max(total_ms / 2, kMinAutoLimitMs));
  limit_ = std::max<Time>(1, static_cast<Time>(limit_ms * 1e6 + 0.5));
  period_ = std::max<Time>(1, limit_ / 4);
  last_check_ = sim_.now();
  steal_at_check_.assign(static_cast<std::size_t>(sim_.vcpu_count()), 0);
  // The checks allocate nothing: a run's allocations do not grow with its length.
  steal_delta_.assign(steal_at_check_.size(), 0);
  std::size_t tasks = 0;
  for (auto& g : sim_.guests()) tasks = std::max(tasks, g->tasks().size());
  heads_.reserve(tasks);
  woken_.reserve(tasks);
  for (int i = 0; i < sim_.vcpu_count(); ++i)
    steal_at_check_[static_cast<std::size_t>(i)] =
        sim_.platform().steal_ns(sim_.vcpu(i), last_check_);
  sim_.queue().push(sim_.now() + period_, EventKind::watchdog, 0, 0);
}

void Watchdog::progress(Task& t) {
  t.last_progress = sim_.now();
  t.host_wait = 0;
  t.progress_tracked = true;
}

void Watchdog::t_waiting(Task& t, const LockWatch* w) { t.waiting_for = w; }

void Watchdog::acquired(Task& t, LockWatch& w) {
  t.waiting_for = nullptr;
  t.woken_for_lock = false;
  t.spin_site = -1;
  w.holder = &t;
  w.last_locker = &t;
  sim_.faults().on_acquire(t);
}

void Watchdog::released(Task& t, LockWatch& w) {
  w.holder = nullptr;
  w.last_unlocker = &t;
}

Time Watchdog::stalled_for(const Task& t, Time now) const {
  return now - t.last_progress - t.host_wait;
}

void Watchdog::account_host_wait(Time now) {
  const Time since_check = now - last_check_;
  last_check_ = now;
  // Each vCPU's steal time over the period just ended.
  std::vector<Time>& delta = steal_delta_;
  for (std::size_t i = 0; i < delta.size(); ++i) {
    const std::int64_t s = sim_.platform().steal_ns(sim_.vcpu(static_cast<int>(i)), now);
    delta[i] = s - steal_at_check_[i];
    steal_at_check_[i] = s;
  }
  const auto of = [&](const Task* t) { return delta[static_cast<std::size_t>(t->vcpu->index)]; };
  std::vector<const Task*>& heads = heads_;
  std::vector<const Task*>& woken = woken_;
  for (auto& g : sim_.guests()) {
    heads.clear();
    woken.clear();
    for (auto& t : g->tasks()) {
      // Each task's time on a guest run queue over the period, in all and as a woken waiter.
      const Time open = t->on_rq ? now - t->rq_since : 0;
      const Time rq = t->rq_wait + open;
      const Time wrq = t->woken_rq_wait + (t->woken_for_lock ? open : 0);
      t->rq_delta = rq - t->rq_wait_at_check;
      t->rq_wait_at_check = rq;
      t->woken_rq_delta = wrq - t->woken_rq_at_check;
      t->woken_rq_at_check = wrq;
      if (t->woken_rq_delta > 0) woken.push_back(t.get());
      if (t->waiting_for != nullptr && !t->fiber.done() &&
          (is_queue_head(*g, *t) || t->woken_for_lock))
        heads.push_back(t.get());
    }
    for (auto& t : g->tasks()) {
      if (!t->progress_tracked || t->fiber.done()) continue;
      // Held up by the host: its own vCPU's steal time, or the whole period if whoever it
      // waits behind never got a pCPU in it. Only the whole period: a blocker the host
      // merely interrupts (an adversarial host's short preemptions) ran in between, and a
      // task still stuck behind it is stuck. The same holds for the guest's own run
      // queues: its own time on one, and the whole period if the holder or queue head sat
      // on one throughout (a holder preempted in the guest while its vCPU runs others).
      Time d = std::max(of(t.get()), t->rq_delta);
      const auto whole = [&](const Task* b) {
        if (of(b) >= since_check || b->rq_delta >= since_check) d = since_check;
      };
      // A sleeping lock's unlock wakes only the first waiter, and everyone asleep behind it
      // waits while that waiter waits for its vCPU (several tasks per vCPU: a slice of up
      // to 12 ms each): the time this lock's woken waiters sat on a run queue in the period
      // is left out, theirs who have taken the lock since included. A lost wake-up leaves
      // no woken waiter, so nothing is left out for it.
      Time queued = 0;
      if (const LockWatch* w = t->waiting_for) {
        if (w->holder != nullptr) whole(w->holder);
        for (const Task* h : heads)
          if (h->waiting_for == w && h != t.get()) whole(h);
        for (const Task* b : woken)
          if (b->woken_for == w && b != t.get()) queued += b->woken_rq_delta;
      }
      d = std::max(d, std::min(queued, since_check));
      t->host_wait += std::min({d, since_check, now - t->last_progress});
    }
  }
}

bool Watchdog::check() {
  const Time now = sim_.now();
  account_host_wait(now);
  bool stuck = false;
  for (auto& g : sim_.guests())
    for (auto& t : g->tasks())
      stuck = stuck || (t->progress_tracked && !t->fiber.done() && stalled_for(*t, now) >= limit_);
  if (stuck) {
    fire(fmt::format(
             "no progress for {} not spent waiting for a CPU (watchdog limit; [run] watchdog_ms)",
             ms(limit_)),
         false);
    return true;
  }
  sim_.queue().push(now + period_, EventKind::watchdog, 0, 0);
  return false;
}

void Watchdog::all_blocked() { fire("every vCPU is blocked and no event is pending", true); }

std::string Watchdog::task_name(const Task* t) const {
  if (t == nullptr) return "none";
  return fmt::format("{}: {} (vCPU {})", t->guest->name(), t->name, t->vcpu->id);
}

std::string Watchdog::vcpu_name(int global_index) {
  if (global_index < 0) return "?";
  const Vcpu& v = sim_.vcpu(global_index);
  return fmt::format("{}/vcpu{}", v.guest->name(), v.id);
}

StuckTask Watchdog::describe(const Task& t) const {
  StuckTask s;
  Vcpu& v = *t.vcpu;
  Guest& g = *t.guest;
  s.task = fmt::format("{}: {}", g.name(), t.name);
  s.vcpu = v.id;
  s.no_progress_since = t.last_progress;
  s.host_wait = t.host_wait;
  const std::string irqs = t.irqs_off ? "IRQs off" : "IRQs on";
  if (t.blocked) {
    s.state = "blocked (asleep in schedule(), waiting for a wake-up)";
  } else if (v.curr != &t) {
    s.state = "runnable, waiting on its vCPU's run queue";
  } else if (v.halted && v.halt_for_pv) {
    s.state = fmt::format("halted in pv_wait with {}{}", irqs,
                          t.irqs_off ? ": only a kick can wake it" : "");
  } else if (static_cast<int>(t.sym) < kSpinSiteCount) {
    s.state = fmt::format("spinning in {} ({})", sym_name(t.sym), irqs);
  } else {
    s.state = fmt::format("running ({})", irqs);
  }
  if (!v.running && !(v.halted && v.halt_for_pv))
    s.state += "; its vCPU is descheduled by the host";
  // A waiter halted in pv_wait_node() whose MCS lock was passed meanwhile is the queue
  // head already: it just has not woken up to notice.
  const qspin::Node<SimEnv>* node = t.waiting_for != nullptr ? current_node(g, v.id) : nullptr;
  std::string r = role(t.spin_site);
  if (node != nullptr && node->locked.raw() != 0 && r != "queue head")
    r = "queue head (the MCS lock was passed to it while it slept)";
  s.queue_head = r.rfind("queue head", 0) == 0;
  if (!r.empty() && t.waiting_for != nullptr) s.state += fmt::format("; {}", r);
  if (t.waiting_for != nullptr) {
    if (const std::string n = node_state(g, v.id); !n.empty()) s.state += fmt::format("; {}", n);
  }
  if (const LockWatch* w = t.waiting_for) {
    s.lock = w->name;
    s.holder = task_name(w->holder);
    s.last_locker = task_name(w->last_locker);
    s.last_unlocker = task_name(w->last_unlocker);
    if (w->describe != nullptr) s.lock_word = w->describe(w->lock);
  }
  return s;
}

void Watchdog::fire(std::string reason, bool all_tasks) {
  LivenessReport r;
  r.at = sim_.now();
  r.limit = limit_;
  r.reason = std::move(reason);
  for (auto& g : sim_.guests())
    for (auto& t : g->tasks()) {
      if (!t->progress_tracked || t->fiber.done()) continue;
      if (!all_tasks && stalled_for(*t, r.at) < limit_) continue;
      StuckTask s = describe(*t);
      const auto& mine = trace_.of(t->vcpu->index);
      for (std::size_t i = 0; i < mine.size(); ++i) s.events.push_back(event_line(mine.at(i)));
      r.tasks.push_back(std::move(s));
    }
  std::stable_sort(r.tasks.begin(), r.tasks.end(), [](const StuckTask& a, const StuckTask& b) {
    return a.queue_head > b.queue_head;
  });
  const auto& all = trace_.all();
  const std::size_t first = all.size() > kEventsShown ? all.size() - kEventsShown : 0;
  for (std::size_t i = first; i < all.size(); ++i) r.events.push_back(event_line(all.at(i)));
  report_ = std::move(r);
}

std::string Watchdog::event_line(const TraceRecord& e) {
  std::string line =
      fmt::format("{:>14} ns  {:<14} {}", e.time, vcpu_name(e.vcpu), trace_kind_name(e.kind));
  if (e.other >= 0) line += fmt::format(" {}", vcpu_name(e.other));
  return line;
}

std::string LivenessReport::text() const {
  std::string out = fmt::format("pvlock: LIVENESS FAILURE at {} simulated: {}\n", ms(at), reason);
  out += fmt::format("{} stuck task(s):\n", tasks.size());
  for (const StuckTask& t : tasks) {
    out += fmt::format("  {} — no progress since {}", t.task, ms(t.no_progress_since));
    if (t.host_wait > 0) out += fmt::format(" ({} of it waiting for a CPU)", ms(t.host_wait));
    out += "\n";
    out += fmt::format("    waits for:     {}\n", t.lock);
    out += fmt::format("    state:         {}\n", t.state);
    if (t.lock != "-") {
      out += fmt::format("    holder:        {}\n", t.holder);
      out += fmt::format("    last locker:   {}\n", t.last_locker);
      out += fmt::format("    last unlocker: {}\n", t.last_unlocker);
      if (!t.lock_word.empty()) out += fmt::format("    lock word:     {}\n", t.lock_word);
    }
    if (!t.events.empty()) out += "    its vCPU's last events:\n";
    for (const std::string& e : t.events) out += fmt::format("      {}\n", e);
  }
  out += fmt::format("last {} simulator events (oldest first):\n", events.size());
  for (const std::string& e : events) out += fmt::format("  {}\n", e);
  return out;
}

nlohmann::ordered_json LivenessReport::json() const {
  nlohmann::ordered_json j;
  j["stuck"] = true;
  j["at_ns"] = at;
  j["limit_ns"] = limit;
  j["reason"] = reason;
  nlohmann::ordered_json ts = nlohmann::ordered_json::array();
  for (const StuckTask& t : tasks)
    ts.push_back({{"task", t.task},
                  {"vcpu", t.vcpu},
                  {"lock", t.lock},
                  {"state", t.state},
                  {"holder", t.holder},
                  {"last_locker", t.last_locker},
                  {"last_unlocker", t.last_unlocker},
                  {"lock_word", t.lock_word},
                  {"no_progress_since_ns", t.no_progress_since},
                  {"host_wait_ns", t.host_wait},
                  {"events", t.events}});
  j["tasks"] = ts;
  j["events"] = events;
  j["text"] = text();
  return j;
}

}  // namespace pvlock::sim
