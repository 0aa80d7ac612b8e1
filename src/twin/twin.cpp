// SPDX-License-Identifier: GPL-2.0-only
#include "twin/twin.hpp"

#include <fmt/core.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>

#include "calibrate/system_facts.hpp"
#include "harness/parallel.hpp"
#include "harness/run.hpp"
#include "native/bench.hpp"
#include "twin/background.hpp"
#include "twin/rank.hpp"

namespace pvlock::twin {
namespace {

void simulate(const calibrate::Calibration& cal, const TwinOptions& o, TwinCell& c) {
  SimSettings s = o.sim;
  s.background_threads = c.stress_threads;
  const scenario::Scenario sc = twin_scenario(cal, find_twin(c.lock), c.threads, o.workload, s);
  const auto t0 = std::chrono::steady_clock::now();
  const nlohmann::ordered_json j = harness::run_to_json(sc);
  c.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& vm = j.at("vms").at(0);
  c.predicted_ops_s = vm.at("score").get<double>();
  const double lo = static_cast<double>(vm.at("per_task").at("min").get<std::uint64_t>());
  const double hi = static_cast<double>(vm.at("per_task").at("max").get<std::uint64_t>());
  c.predicted_fairness = hi > 0 ? lo / hi : 0;
  if (j.contains("host")) {
    const auto& h = j.at("host");
    c.predicted_wait_pct = h.value("steal_pct", 0.0);
    c.predicted_holder_preemptions = h.value("lock_holder_preemptions", std::uint64_t{0});
    c.predicted_waiter_preemptions = h.value("lock_waiter_preemptions", std::uint64_t{0});
    // The host counters cover the measured window (after the warm-up), duration_ms long.
    const double window_s = static_cast<double>(o.sim.duration_ms) / 1e3;
    if (window_s > 0)
      c.predicted_preemptions_s =
          static_cast<double>(h.value("preemptions", std::uint64_t{0})) / window_s;
  }
  c.sim_stuck = j.contains("liveness");
}

// Involuntary context switches of this process so far (every thread, the benchmark's
// included).
long involuntary_switches() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_nivcsw;
}

std::optional<double> find_ops(const std::vector<TwinCell>& cells, const std::string& lock,
                               int threads, bool measured) {
  for (const TwinCell& c : cells)
    if (c.lock == lock && c.threads == threads) {
      const double v = measured ? c.measured_ops_s : c.predicted_ops_s;
      return v;
    }
  return std::nullopt;
}

std::optional<double> ratio_of(std::optional<double> num, std::optional<double> den) {
  if (!num || !den || *den <= 0) return std::nullopt;
  return *num / *den;
}

nlohmann::ordered_json opt(std::optional<double> v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

std::string fmt_opt(std::optional<double> v, const char* spec = "{:.2f}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
}

}  // namespace

std::optional<double> TwinCell::ratio() const {
  if (measured_ops_s <= 0) return std::nullopt;
  return predicted_ops_s / measured_ops_s;
}

std::optional<double> Collapse::ratio() const { return ratio_of(predicted, measured); }

bool Collapse::within_2x() const {
  const auto r = ratio();
  return r && *r >= 0.5 && *r <= 2.0;
}

std::vector<int> default_twin_threads(int cores) {
  cores = std::max(1, cores);
  std::vector<int> out = {1, cores, 2 * cores, 4 * cores};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

TwinSummary summarize_cells(const std::vector<TwinCell>& cells, int cores) {
  TwinSummary s;
  std::vector<double> m, p;
  double steal = 0, background = 0;
  std::vector<std::string> locks;
  for (const TwinCell& c : cells) {
    if (!c.native_stuck && !c.sim_stuck) {
      m.push_back(c.measured_ops_s);
      p.push_back(c.predicted_ops_s);
    }
    steal += c.steal_fraction;
    background += c.background;
    if (std::find(locks.begin(), locks.end(), c.lock) == locks.end()) locks.push_back(c.lock);
  }
  s.rank_correlation = spearman(m, p);
  s.mean_steal = cells.empty() ? 0 : steal / static_cast<double>(cells.size());
  s.mean_background = cells.empty() ? 0 : background / static_cast<double>(cells.size());
  for (const std::string& lock : locks) {
    Collapse k;
    k.lock = lock;
    k.per_core_threads = cores;
    k.over_threads = 4 * cores;
    k.measured =
        ratio_of(find_ops(cells, lock, 4 * cores, true), find_ops(cells, lock, cores, true));
    k.predicted =
        ratio_of(find_ops(cells, lock, 4 * cores, false), find_ops(cells, lock, cores, false));
    if (k.within_2x()) ++s.collapse_within_2x;
    s.collapse.push_back(k);
  }
  return s;
}

TwinResult run_twin(const calibrate::Calibration& cal, const TwinOptions& o,
                    const std::function<void(const std::string&)>& progress) {
  const auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  const int cores = static_cast<int>(cal.topology.cpus.size());
  TwinResult r;
  r.calibration = cal;
  r.options = o;
  if (r.options.locks.empty()) r.options.locks = default_twin_locks();
  if (r.options.threads.empty()) r.options.threads = default_twin_threads(cores);
  for (const std::string& lock : r.options.locks) {
    const TwinLock t = find_twin(lock);
    for (int n : r.options.threads) {
      TwinCell c;
      c.lock = lock;
      c.sim_lock = t.sim;
      c.threads = n;
      r.cells.push_back(c);
    }
  }
  // Native first, one cell at a time: the simulations would otherwise take CPU from it.
  native::BenchOptions bo;
  bo.duration_s = o.native_s;
  bo.cs_lines = 0;  // the critical section is the busy-wait alone, as hold_ns in the twin
  bo.cs_ns = o.workload.cs_ns;
  bo.outside_ns = o.workload.outside_ns;
  for (TwinCell& c : r.cells) {
    if (o.background_window_s > 0) c.background = background_runnable(o.background_window_s);
    if (o.background_as_stress) c.stress_threads = static_cast<int>(std::lround(c.background));
    const calibrate::CpuTimes before = calibrate::read_cpu_times();
    const long switches_before = involuntary_switches();
    const native::BenchRow row = native::run_bench_point(c.lock, c.threads, bo);
    if (row.duration_s > 0)
      c.measured_switches_s =
          static_cast<double>(involuntary_switches() - switches_before) / row.duration_s;
    c.steal_fraction = calibrate::steal_fraction(before, calibrate::read_cpu_times());
    c.measured_ops_s = row.ops_per_s;
    c.measured_fairness = row.fairness;
    c.measured_cpu_s = row.cpu_s;
    c.native_stuck = row.stuck;
    say(fmt::format("native {} x{}: {:.4g} ops/s, steal {:.1f}%, {:.1f} other runnable", c.lock,
                    c.threads, c.measured_ops_s, 100 * c.steal_fraction, c.background));
    if (row.stuck)
      throw std::runtime_error(
          fmt::format("native {} with {} threads is stuck", c.lock, c.threads));
  }
  // Then the simulations, sim_jobs at a time (each is single-threaded and deterministic).
  std::mutex say_mu;
  harness::parallel_for(r.cells.size(), o.sim_jobs, [&](std::size_t i) {
    simulate(cal, r.options, r.cells[i]);
    std::lock_guard g(say_mu);
    const TwinCell& c = r.cells[i];
    say(fmt::format("simulated {} x{}: {:.4g} ops/s ({:.1f} s)", c.lock, c.threads,
                    c.predicted_ops_s, c.sim_wall_s));
  });
  r.summary = summarize_cells(r.cells, cores);
  return r;
}

nlohmann::ordered_json to_json(const TwinResult& r) {
  nlohmann::ordered_json j;
  j["calibration"] = calibrate::to_json(r.calibration);
  j["settings"] = {{"locks", r.options.locks},
                   {"threads", r.options.threads},
                   {"native_s", r.options.native_s},
                   {"cs_ns", r.options.workload.cs_ns},
                   {"outside_ns", r.options.workload.outside_ns},
                   {"sim_duration_ms", r.options.sim.duration_ms},
                   {"sim_warmup_ms", r.options.sim.warmup_ms},
                   {"seed", r.options.sim.seed},
                   {"steal_as_noise", r.options.sim.steal_as_noise},
                   {"background_as_stress", r.options.background_as_stress}};
  nlohmann::ordered_json cells = nlohmann::ordered_json::array();
  for (const TwinCell& c : r.cells)
    cells.push_back({{"lock", c.lock},
                     {"sim_lock", c.sim_lock},
                     {"threads", c.threads},
                     {"measured_ops_s", c.measured_ops_s},
                     {"predicted_ops_s", c.predicted_ops_s},
                     {"ratio", opt(c.ratio())},
                     {"steal_pct", 100 * c.steal_fraction},
                     {"background_runnable", c.background},
                     {"measured_involuntary_switches_s", c.measured_switches_s},
                     {"predicted_preemptions_s", c.predicted_preemptions_s},
                     {"stress_threads", c.stress_threads},
                     {"measured_fairness", c.measured_fairness},
                     {"predicted_fairness", c.predicted_fairness},
                     {"measured_cpu_s", c.measured_cpu_s},
                     {"predicted_wait_pct", c.predicted_wait_pct},
                     {"predicted_holder_preemptions", c.predicted_holder_preemptions},
                     {"predicted_waiter_preemptions", c.predicted_waiter_preemptions},
                     {"native_stuck", c.native_stuck},
                     {"sim_stuck", c.sim_stuck},
                     {"sim_wall_s", c.sim_wall_s}});
  j["cells"] = cells;
  nlohmann::ordered_json col = nlohmann::ordered_json::array();
  for (const Collapse& k : r.summary.collapse)
    col.push_back({{"lock", k.lock},
                   {"per_core_threads", k.per_core_threads},
                   {"over_threads", k.over_threads},
                   {"measured", opt(k.measured)},
                   {"predicted", opt(k.predicted)},
                   {"ratio", opt(k.ratio())},
                   {"within_2x", k.within_2x()}});
  j["summary"] = {{"rank_correlation", opt(r.summary.rank_correlation)},
                  {"cells", r.cells.size()},
                  {"collapse", col},
                  {"collapse_within_2x", r.summary.collapse_within_2x},
                  {"mean_steal_pct", 100 * r.summary.mean_steal},
                  {"mean_background_runnable", r.summary.mean_background}};
  return j;
}

std::string table_text(const TwinResult& r) {
  std::string s;
  s += fmt::format(
      "pvlock twin: {} CPUs, kernel {} ({}), cs {} ns + outside {} ns, native {:.2f} s, "
      "simulated {} ms per cell\n",
      r.calibration.topology.cpus.size(), r.calibration.kernel.release,
      r.calibration.kernel.scheduler, r.options.workload.cs_ns, r.options.workload.outside_ns,
      r.options.native_s, r.options.sim.duration_ms);
  s += fmt::format("{:<14} {:>7} {:>14} {:>14} {:>7} {:>7} {:>6} {:>10} {:>10}\n", "lock",
                   "threads", "measured/s", "predicted/s", "ratio", "steal%", "other", "switches/s",
                   "predicted");
  for (const TwinCell& c : r.cells)
    s += fmt::format(
        "{:<14} {:>7} {:>14.4g} {:>14.4g} {:>7} {:>7.1f} {:>6.1f} {:>10.4g} {:>10.4g}\n", c.lock,
        c.threads, c.measured_ops_s, c.predicted_ops_s, fmt_opt(c.ratio()), 100 * c.steal_fraction,
        c.background, c.measured_switches_s, c.predicted_preemptions_s);
  s += fmt::format("\nrank correlation (Spearman, {} cells): {}\n", r.cells.size(),
                   fmt_opt(r.summary.rank_correlation, "{:.3f}"));
  if (!r.summary.collapse.empty()) {
    const Collapse& k0 = r.summary.collapse.front();
    s += fmt::format("collapse = ops/s at {} threads / ops/s at {} threads\n", k0.over_threads,
                     k0.per_core_threads);
  }
  s += fmt::format("{:<14} {:>9} {:>9} {:>7} {:>9}\n", "lock", "measured", "predicted", "ratio",
                   "within2x");
  for (const Collapse& k : r.summary.collapse)
    s += fmt::format("{:<14} {:>9} {:>9} {:>7} {:>9}\n", k.lock, fmt_opt(k.measured, "{:.3f}"),
                     fmt_opt(k.predicted, "{:.3f}"), fmt_opt(k.ratio()),
                     k.within_2x() ? "yes" : "no");
  s += fmt::format(
      "collapse factors within x/÷2: {} of {}; mean steal {:.1f}%, mean {:.1f} other runnable "
      "threads{}\n",
      r.summary.collapse_within_2x, r.summary.collapse.size(), 100 * r.summary.mean_steal,
      r.summary.mean_background,
      r.options.background_as_stress ? " (simulated as host stress threads)" : "");
  return s;
}

}  // namespace pvlock::twin
