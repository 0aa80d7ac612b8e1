// SPDX-License-Identifier: GPL-2.0-only
#include "harness/series.hpp"

#include <cassert>
#include <utility>

#include "harness/run.hpp"
#include "pvlock/env/lock_events.hpp"
#include "sim/guest/guest.hpp"
#include "sim/platform.hpp"

namespace pvlock::harness {

using namespace pvlock::sim;  // the harness drives the simulator's types throughout

namespace {

struct Column {
  const char* name;
  const char* unit;
};

// One row: t_ms, then these, in this order (row() below computes them).
constexpr Column kColumns[] = {
    {"t_ms", "ms (end of interval)"},
    {"score", "the workload's unit"},
    {"steal_pct", "% of vCPU time runnable, not running"},
    {"preemptions", "/s"},
    {"holder_preemptions", "/s"},
    {"waiter_preemptions", "/s"},
    {"ple_exits", "/s"},
    {"ple_yields", "/s"},
    {"kicks", "/s"},
    {"kick_yields", "/s"},
    {"halt_blocks", "/s"},
    {"queued_wake_wait_us", "us (mean)"},
    {"pv_wait_early", "/s"},
    {"pv_wait_early_preempted", "/s"},
    {"pv_wait_head", "/s"},
    {"pv_wait_node", "/s"},
    {"kick_to_run_us", "us (mean)"},
    {"pv_lock_stealing", "/s"},
};
constexpr std::size_t kColumnCount = sizeof(kColumns) / sizeof(kColumns[0]);

}  // namespace

SeriesRecorder::SeriesRecorder(Simulation& sim, const std::vector<VmRun>& vms, Time interval)
    : sim_(sim), vms_(vms), interval_(interval), rows_(vms.size()) {
  prev_.assign(vms.size(), Snapshot{});
}

SeriesRecorder::Snapshot SeriesRecorder::take(std::size_t vm, Time now) const {
  Snapshot s{};
  const VmRun& run = vms_[vm];
  s[kDone] = run.workload->done().value_or(0.0);
  const LockEventCounts& c = run.guest->counters();
  auto ev = [&](LockEvent e) { return static_cast<double>(c[e]); };
  s[kWaitEarly] = ev(LockEvent::pv_wait_early);
  s[kWaitEarlyPreempted] = ev(LockEvent::pv_wait_early_preempted);
  s[kWaitHead] = ev(LockEvent::pv_wait_head);
  s[kWaitNode] = ev(LockEvent::pv_wait_node);
  s[kKickWakes] = ev(LockEvent::pv_kick_wake);
  s[kKickWakeNs] = ev(LockEvent::pv_latency_wake);
  s[kStealing] = ev(LockEvent::pv_lock_stealing);
  if (const HostCounters* host = sim_.platform().guest_host_counters(run.guest->index())) {
    const HostCounters& h = *host;
    auto d = [](auto x) { return static_cast<double>(x); };
    s[kStealNs] = d(sim_.platform().guest_steal_ns(run.guest->index(), now));
    s[kPreempt] = d(h.preemptions);
    s[kHolderPreempt] = d(h.lock_holder_preemptions);
    s[kWaiterPreempt] = d(h.lock_waiter_preemptions);
    s[kPleExits] = d(h.exits_ple);
    s[kPleYields] = d(h.ple_yields);
    s[kKicks] = d(h.kicks);
    s[kKickYields] = d(h.kick_yields);
    s[kHaltBlocks] = d(h.halt_blocks);
    s[kQueuedWaitNs] = d(h.wake_queued_wait_ns);
    s[kQueuedWaits] = d(h.wake_waits_ended);
  }
  return s;
}

void SeriesRecorder::before_reset() {
  // Counters are about to restart from zero (the workload's done() is not): the previous
  // snapshot minus the totals so far is the baseline the restarted counters continue from.
  for (std::size_t k = 0; k < vms_.size(); ++k) {
    const Snapshot now = take(k, sim_.now());
    for (std::size_t i = 0; i < kRawCount; ++i)
      if (i != kDone) prev_[k][i] -= now[i];
  }
}

void SeriesRecorder::sample(Time now) {
  const double dt_s = static_cast<double>(now - prev_t_) * 1e-9;
  if (dt_s <= 0) return;
  for (std::size_t k = 0; k < vms_.size(); ++k) {
    const Snapshot cur = take(k, now);
    Snapshot d{};
    for (std::size_t i = 0; i < kRawCount; ++i) d[i] = cur[i] - prev_[k][i];
    const double vcpus = static_cast<double>(vms_[k].guest->vcpu_count());
    auto rate = [&](Raw r) { return d[r] / dt_s; };
    auto mean = [&](Raw sum, Raw count, double scale) {
      return d[count] > 0 ? d[sum] / d[count] * scale : 0.0;
    };
    std::vector<double> row{static_cast<double>(now) * 1e-6,
                            rate(kDone),
                            100.0 * d[kStealNs] * 1e-9 / (dt_s * vcpus),
                            rate(kPreempt),
                            rate(kHolderPreempt),
                            rate(kWaiterPreempt),
                            rate(kPleExits),
                            rate(kPleYields),
                            rate(kKicks),
                            rate(kKickYields),
                            rate(kHaltBlocks),
                            mean(kQueuedWaitNs, kQueuedWaits, 1e-3),
                            rate(kWaitEarly),
                            rate(kWaitEarlyPreempted),
                            rate(kWaitHead),
                            rate(kWaitNode),
                            mean(kKickWakeNs, kKickWakes, 1e-3),
                            rate(kStealing)};
    assert(row.size() == kColumnCount);
    rows_[k].push_back(std::move(row));
    prev_[k] = cur;
  }
  prev_t_ = now;
}

nlohmann::ordered_json SeriesRecorder::json() const {
  nlohmann::ordered_json j;
  j["interval_ns"] = interval_;
  nlohmann::ordered_json cols = nlohmann::ordered_json::array();
  for (const Column& c : kColumns) cols.push_back({{"name", c.name}, {"unit", c.unit}});
  j["columns"] = cols;
  nlohmann::ordered_json vms = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < vms_.size(); ++k) {
    nlohmann::ordered_json unit = vms_[k].workload->done() ? vms_[k].workload->unit() : "";
    vms[vms_[k].name] = {{"score_unit", unit}, {"rows", rows_[k]}};
  }
  j["vms"] = vms;
  return j;
}

}  // namespace pvlock::harness
