// SPDX-License-Identifier: GPL-2.0-only
#include "sweep/runner.hpp"

#include <fmt/core.h>

#include <charconv>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "harness/parallel.hpp"
#include "harness/point_progress.hpp"
#include "scenario/parse.hpp"
#include "sweep/results.hpp"

namespace pvlock::sweep {

std::pair<int, int> parse_shard(const std::string& s) {
  const auto slash = s.find('/');
  int i = -1, n = -1;
  auto num = [](std::string_view v, int& out) {
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    return !v.empty() && ec == std::errc{} && p == v.data() + v.size();
  };
  if (slash == std::string::npos || !num(std::string_view(s).substr(0, slash), i) ||
      !num(std::string_view(s).substr(slash + 1), n))
    throw SweepError("--shard " + s + ": expected I/N, e.g. 0/4");
  if (n < 1 || i < 0 || i >= n) throw SweepError("--shard " + s + ": need 0 <= I < N");
  return {i, n};
}

namespace {

struct Task {
  std::size_t combo;
  std::uint64_t seed;
};

// Writes finished points in task order, each as soon as all earlier ones are written.
class OrderedWriter {
 public:
  OrderedWriter(std::ofstream& out) : out_(out) {}
  void put(std::size_t index, std::string line) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.emplace(index, std::move(line));
    while (!pending_.empty() && pending_.begin()->first == next_) {
      out_ << pending_.begin()->second << '\n';
      out_.flush();
      pending_.erase(pending_.begin());
      ++next_;
    }
  }

 private:
  std::ofstream& out_;
  std::mutex mu_;
  std::map<std::size_t, std::string> pending_;
  std::size_t next_ = 0;
};

std::string describe(const PointSpec& p, std::uint64_t seed) {
  return p.label + (p.label.empty() ? "" : " ") + "seed=" + std::to_string(seed);
}

}  // namespace

SweepStats run_points(const std::vector<PointSpec>& points, const PointsOptions& o,
                      const PointRunFn& run) {
  if (o.seeds < 1 || o.seeds > 100000)
    throw SweepError("--seeds: must be between 1 and 100000, got " + std::to_string(o.seeds));
  if (o.jobs < 1 || o.jobs > 1024)
    throw SweepError("--jobs: must be between 1 and 1024, got " + std::to_string(o.jobs));
  if (o.out.empty()) throw SweepError("--out: a results file is required");

  // Validate every point before running anything.
  std::vector<scenario::Scenario> scenarios;
  scenarios.reserve(points.size());
  for (const PointSpec& p : points) {
    try {
      scenarios.push_back(scenario::load_scenario_file(p.scenario, p.sets));
    } catch (const scenario::ScenarioError& e) {
      throw SweepError(e.what());
    }
  }

  SweepStats st;
  std::vector<Task> tasks;
  std::set<std::string> done;
  for (const ResultLine& l : read_results(o.out, true, true))
    done.insert(point_key(l.point, l.seed));
  std::size_t index = 0;
  for (std::size_t c = 0; c < points.size(); ++c)
    for (int s = 0; s < o.seeds; ++s, ++index) {
      ++st.total;
      if (static_cast<int>(index % static_cast<std::size_t>(o.shard_count)) != o.shard_index)
        continue;
      ++st.in_shard;
      const std::uint64_t seed = scenarios[c].run.seed + static_cast<std::uint64_t>(s);
      if (done.count(point_key(points[c].point, seed)) != 0) {
        ++st.skipped;
        continue;
      }
      tasks.push_back(Task{c, seed});
    }

  std::ofstream out(o.out, std::ios::binary | std::ios::app);
  if (!out) throw SweepError(o.out + ": cannot open for writing");
  OrderedWriter writer(out);
  harness::PointProgress progress(o.progress, tasks.size(), harness::is_tty(o.progress),
                                  o.progress_name);
  // Which point failed, for the message; the exception itself comes out of parallel_for.
  std::mutex error_mu;
  std::string error_point;
  std::exception_ptr error;
  try {
    harness::parallel_for(tasks.size(), o.jobs, [&](std::size_t i) {
      const Task& t = tasks[i];
      try {
        scenario::Scenario sc = scenarios[t.combo];
        sc.run.seed = t.seed;
        ResultLine l{points[t.combo].point, t.seed, run(sc, points[t.combo])};
        writer.put(i, format_line(l));
        progress.point_done(describe(points[t.combo], t.seed));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (error_point.empty()) error_point = describe(points[t.combo], t.seed);
        throw;
      }
    });
  } catch (...) {
    error = std::current_exception();
  }
  progress.finish();
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const scenario::ScenarioError& e) {
      throw SweepError("point " + error_point + ": " + e.what());
    } catch (const std::invalid_argument& e) {
      throw SweepError("point " + error_point + ": " + e.what());
    } catch (const std::exception& e) {
      throw std::runtime_error("point " + error_point + ": " + e.what());
    }
  }
  st.ran = tasks.size();
  return st;
}

SweepStats run_sweep(const SweepOptions& o, const RunFn& run) {
  const std::vector<Combo> combos = enumerate(o.varies);
  std::vector<PointSpec> points;
  points.reserve(combos.size());
  for (const Combo& c : combos) {
    PointSpec p{o.scenario, o.sets, c.point, {}};
    p.sets.insert(p.sets.end(), c.sets.begin(), c.sets.end());
    for (const std::string& set : c.sets) p.label += (p.label.empty() ? "" : " ") + set;
    points.push_back(std::move(p));
  }
  PointsOptions po;
  po.seeds = o.seeds;
  po.jobs = o.jobs;
  po.shard_index = o.shard_index;
  po.shard_count = o.shard_count;
  po.out = o.out;
  po.progress = o.progress;
  return run_points(points, po,
                    [&run](const scenario::Scenario& sc, const PointSpec&) { return run(sc); });
}

}  // namespace pvlock::sweep
