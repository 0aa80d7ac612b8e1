// SPDX-License-Identifier: GPL-2.0-only
#include "reproduce/reproduce.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include "harness/parallel.hpp"
#include "reproduce/uncertainty.hpp"

namespace pvlock::reproduce {

std::vector<std::string> cell_overrides(const Experiment& ex, const Cell& cell,
                                        const Options& options, int seed) {
  std::vector<std::string> overrides;
  if (options.quick) overrides = ex.quick_overrides;
  overrides.insert(overrides.end(), cell.overrides.begin(), cell.overrides.end());
  overrides.insert(overrides.end(), options.extra_overrides.begin(), options.extra_overrides.end());
  if (seed > 0) overrides.push_back("run.seed=" + std::to_string(seed));
  return overrides;
}

std::vector<ExperimentResult> run_experiments(const std::vector<Experiment>& experiments,
                                              const Options& options, const Runner& runner) {
  // Where one run's figures go: a cell of an experiment, for one seed.
  struct Target {
    std::size_t exp, cell;
    int index;  // 0..N-1: which of the cell's N runs
    int seed;   // its run.seed (first seed + index), or 0: the scenario's own (one run)
  };
  // One simulation per distinct (scenario, overrides): cells that differ only in the metric
  // they read (a profile share and a score of the same configuration) share it. Runs are
  // deterministic, so sharing changes no figure, only the wall time.
  struct Job {
    std::string scenario;
    std::vector<std::string> overrides;
    std::vector<Target> targets;
  };
  std::vector<const Experiment*> chosen;
  for (const Experiment& e : experiments)
    if (options.only.empty() || e.id == options.only) chosen.push_back(&e);
  if (chosen.empty()) throw std::invalid_argument("no experiment named '" + options.only + "'");

  std::vector<Job> jobs;
  std::map<std::pair<std::string, std::vector<std::string>>, std::size_t> job_of;
  // values[experiment][cell][seed - 1]: every seed's figure, averaged below.
  std::vector<std::vector<std::vector<double>>> values(chosen.size());
  std::vector<std::vector<std::string>> stuck(chosen.size()), why(chosen.size());
  std::vector<std::vector<std::vector<std::string>>> quarters(chosen.size());
  // Cells of this run: a cell left out of --quick is not in the results at all, one whose
  // lock the build lacks is, as "not run" with the reason.
  auto in_run = [&](const Cell& c) { return !options.quick || c.in_quick; };
  std::vector<std::vector<std::string>> not_run(chosen.size());
  // first_seed_of[experiment][cell]: the cell's first run.seed (Options::first_seed).
  std::vector<std::vector<int>> first_seed_of(chosen.size());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    not_run[i].assign(chosen[i]->cells.size(), std::string());
    for (std::size_t c = 0; c < chosen[i]->cells.size(); ++c)
      for (const std::string& lock : chosen[i]->cells[c].requires_locks) {
        const std::string why = options.lock_missing ? options.lock_missing(lock) : "";
        if (!why.empty() && not_run[i][c].empty()) not_run[i][c] = lock + ": " + why;
      }
  }
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Experiment& ex = *chosen[i];
    const int n = options.seeds > 0 ? options.seeds : ex.seed_count(options.quick);
    values[i].assign(ex.cells.size(), std::vector<double>(static_cast<std::size_t>(n)));
    stuck[i].assign(ex.cells.size(), std::string());
    why[i].assign(ex.cells.size(), std::string());
    if (options.explain && n > 1)
      quarters[i].assign(ex.cells.size(), std::vector<std::string>(static_cast<std::size_t>(n)));
    first_seed_of[i].assign(ex.cells.size(), 1);
    for (std::size_t c = 0; c < ex.cells.size(); ++c) {
      if (!in_run(ex.cells[c]) || !not_run[i][c].empty()) continue;
      int first = options.first_seed;
      if (first <= 0) {
        const std::uint64_t s =
            options.scenario_seed ? options.scenario_seed(ex.cells[c].scenario,
                                                          cell_overrides(ex, ex.cells[c], options))
                                  : 1;
        if (s > static_cast<std::uint64_t>(std::numeric_limits<int>::max() - n))
          throw std::invalid_argument(ex.id + "/" + ex.cells[c].name + ": run.seed " +
                                      std::to_string(s) + " leaves no room for " +
                                      std::to_string(n) + " seeds (at most " +
                                      std::to_string(std::numeric_limits<int>::max() - n) + ")");
        first = static_cast<int>(s);
      }
      first_seed_of[i][c] = first;
      for (int k = 0; k < n; ++k) {
        // One run without --first-seed: the scenario's own seed, no override.
        const int seed = n > 1 || options.first_seed > 0 ? first + k : 0;
        auto key =
            std::make_pair(ex.cells[c].scenario, cell_overrides(ex, ex.cells[c], options, seed));
        auto [it, fresh] = job_of.try_emplace(key, jobs.size());
        if (fresh) jobs.push_back({key.first, key.second, {}});
        jobs[it->second].targets.push_back({i, c, k, seed});
      }
    }
  }

  std::atomic<int> done{0};
  std::mutex mu;
  harness::parallel_for(jobs.size(), options.jobs, [&](std::size_t j) {
    const Job& job = jobs[j];
    std::string where = chosen[job.targets[0].exp]->id + "/" +
                        chosen[job.targets[0].exp]->cells[job.targets[0].cell].name;
    try {
      const nlohmann::ordered_json run = runner(job.scenario, job.overrides);
      const std::string explained = options.explain ? explain_run(run) : std::string();
      for (const Target& t : job.targets) {
        const auto k = static_cast<std::size_t>(t.index);
        if (options.explain && k == 0) why[t.exp][t.cell] = explained;
        if (options.explain && !quarters[t.exp].empty())
          quarters[t.exp][t.cell][k] = score_quarters(run);
        const Experiment& ex = *chosen[t.exp];
        const Cell& cell = ex.cells[t.cell];
        where = ex.id + "/" + cell.name;
        double& value = values[t.exp][t.cell][k];
        // A run the liveness watchdog stopped ended early: its scores describe a truncated
        // run, never a measurement. The cell says so instead of giving a number.
        if (run.contains("liveness")) {
          std::lock_guard g(mu);
          std::string& why = stuck[t.exp][t.cell];
          if (why.empty())
            why = fmt::format("{}liveness watchdog at {} ns: {}",
                              t.seed > 0 ? fmt::format("seed {}: ", t.seed) : "",
                              run.at("liveness").value("at_ns", std::int64_t{0}),
                              run.at("liveness").value("reason", std::string("no progress")));
          value = std::nan("");
        } else {
          value = extract_metric(run, cell.metric);
        }
      }
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
    const int d = ++done;
    if (options.progress) {
      std::lock_guard g(mu);
      options.progress(d, static_cast<int>(jobs.size()));
    }
  });

  std::vector<ExperimentResult> out;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Experiment& ex = *chosen[i];
    ExperimentResult r{ex.id, ex.seed_file, ex.title, {}, {}};
    for (std::size_t c = 0; c < ex.cells.size(); ++c) {
      if (!in_run(ex.cells[c])) continue;
      if (!not_run[i][c].empty()) {
        CellResult skipped;
        skipped.name = ex.cells[c].name;
        skipped.published = ex.cells[c].published;
        skipped.simulated = std::nan("");
        skipped.unit = ex.cells[c].unit;
        skipped.first_seed = first_seed_of[i][c];
        skipped.not_run = not_run[i][c];
        r.cells.push_back(std::move(skipped));
        continue;
      }
      const std::vector<double>& v = values[i][c];
      double mean = 0;
      for (double x : v) mean += x;
      mean /= static_cast<double>(v.size());
      double sd = 0;
      if (v.size() > 1) {
        for (double x : v) sd += (x - mean) * (x - mean);
        sd = std::sqrt(sd / static_cast<double>(v.size() - 1));
      }
      r.cells.push_back({ex.cells[c].name, ex.cells[c].published, mean, ex.cells[c].unit,
                         static_cast<int>(v.size()), first_seed_of[i][c], sd, stuck[i][c],
                         why[i][c], v,
                         quarters[i].empty() ? std::vector<std::string>() : quarters[i][c], ""});
    }
    auto value_of = [&](const std::string& name) {
      for (const CellResult& c : r.cells)
        if (c.name == name) return c;
      throw std::logic_error("cell " + name);
    };
    for (const Effect& e : ex.effects) {
      if (!in_run(*ex.cell(e.numerator)) || !in_run(*ex.cell(e.denominator))) continue;
      const CellResult num = value_of(e.numerator), den = value_of(e.denominator);
      EffectResult er;
      er.name = e.name;
      er.not_run = !num.not_run.empty() ? num.not_run : den.not_run;
      if (num.published && den.published && *den.published != 0)
        er.published = *num.published / *den.published;
      if (!er.not_run.empty()) {
        const Band b = tolerance_band(er.published.value_or(1.0), e);
        er.low = b.low;
        er.high = b.high;
        er.simulated = std::nan("");
        r.effects.push_back(er);
        continue;
      }
      er.simulated = den.simulated != 0 ? num.simulated / den.simulated : INFINITY;
      const Band b = tolerance_band(er.published.value_or(1.0), e);
      er.low = b.low;
      er.high = b.high;
      er.agrees = std::isfinite(er.simulated) && er.low <= er.simulated && er.simulated <= er.high;
      er.se = ratio_standard_error(num.per_seed, den.per_seed);
      // No spread (one seed, or seeds that agree exactly) cannot flip a verdict; nor is a
      // cell the watchdog stopped "noise".
      er.resolved = er.se == 0 || !std::isfinite(er.simulated) ||
                    verdict_resolved(er.simulated, 2 * er.se, er.low, er.high);
      r.effects.push_back(er);
    }
    out.push_back(std::move(r));
  }
  return out;
}

nlohmann::ordered_json to_json(const std::vector<ExperimentResult>& results, double wall_s) {
  nlohmann::ordered_json j;
  j["experiments"] = nlohmann::ordered_json::array();
  for (const ExperimentResult& r : results) {
    nlohmann::ordered_json e;
    e["id"] = r.id;
    e["seed_file"] = r.seed_file;
    e["title"] = r.title;
    e["cells"] = nlohmann::ordered_json::array();
    for (const CellResult& c : r.cells) {
      nlohmann::ordered_json cj;
      cj["name"] = c.name;
      cj["published"] =
          c.published ? nlohmann::ordered_json(*c.published) : nlohmann::ordered_json();
      cj["simulated"] = c.simulated;
      cj["unit"] = c.unit;
      if (c.seeds > 1) {
        cj["seeds"] = c.seeds;
        if (c.first_seed != 1) cj["first_seed"] = c.first_seed;
        cj["simulated_sd"] = c.simulated_sd;
        cj["per_seed"] = c.per_seed;
      }
      if (!c.stuck.empty()) cj["stuck"] = c.stuck;
      if (!c.not_run.empty()) cj["not_run"] = c.not_run;
      if (!c.explain.empty()) cj["explain"] = c.explain;
      if (!c.quarters_per_seed.empty()) cj["quarters_per_seed"] = c.quarters_per_seed;
      e["cells"].push_back(cj);
    }
    e["effects"] = nlohmann::ordered_json::array();
    for (const EffectResult& x : r.effects) {
      nlohmann::ordered_json ej;
      ej["name"] = x.name;
      ej["published"] =
          x.published ? nlohmann::ordered_json(*x.published) : nlohmann::ordered_json();
      ej["simulated"] =
          std::isnan(x.simulated) ? nlohmann::ordered_json() : nlohmann::ordered_json(x.simulated);
      ej["low"] = x.low;
      ej["high"] =
          std::isfinite(x.high) ? nlohmann::ordered_json(x.high) : nlohmann::ordered_json();
      ej["agrees"] = x.agrees;
      ej["se"] = std::isfinite(x.se) ? nlohmann::ordered_json(x.se) : nlohmann::ordered_json();
      ej["resolved"] = x.resolved;
      if (!x.not_run.empty()) ej["not_run"] = x.not_run;
      e["effects"].push_back(ej);
    }
    j["experiments"].push_back(e);
  }
  const Tally t = tally(results);
  j["summary"] = {{"effects", t.effects}, {"agree", t.agree}, {"noise", t.noise}};
  j["perf"] = {{"wall_s", wall_s}};
  return j;
}

namespace {
// `text` as lines of at most `width` characters (with `indent`), broken after ", ".
std::string wrap(const std::string& text, const std::string& indent, std::size_t width) {
  std::string out, line = indent;
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t end = text.find(", ", from);
    end = end == std::string::npos ? text.size() : end + 2;
    const std::string piece = text.substr(from, end - from);
    if (line.size() > indent.size() && line.size() + piece.size() > width) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
      line = indent;
    }
    line += piece;
    from = end;
  }
  if (line.size() > indent.size()) out += line + "\n";
  return out;
}

std::string fmt_value(double v) {
  if (std::isnan(v)) return "n/a";  // e.g. a counter share whose denominator never counted
  if (std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3f}", v);
}
}  // namespace

namespace {
constexpr const char* kLegend =
    "effects: published and simulated ratio numerator/denominator; 2 se: twice the standard "
    "error of the simulated ratio over the seeds; band: where the simulated ratio must fall "
    "(experiments/README.md, Tolerances); agrees: inside the band; noise: a ratio "
    "within 2 se would get the other verdict\n";
}  // namespace

std::string to_table(const std::vector<ExperimentResult>& results, bool with_summary) {
  std::string out;
  for (const ExperimentResult& r : results) {
    out += fmt::format("== {} ({}) — {}\n", r.id, r.seed_file, r.title);
    out += fmt::format("  {:<34} {:>14} {:>14}  {}\n", "cell", "published", "simulated", "unit");
    for (const CellResult& c : r.cells)
      out += fmt::format(
          "  {:<34} {:>14} {:>14}  {}{}\n", c.name, c.published ? fmt_value(*c.published) : "-",
          !c.not_run.empty() ? "not run"
          : c.stuck.empty()  ? fmt_value(c.simulated)
                             : "STUCK",
          c.unit,
          c.seeds > 1 && c.stuck.empty() && c.not_run.empty()
              ? fmt::format("  (mean of {} seeds, sd {}, min {}, max {})", c.seeds,
                            fmt_value(c.simulated_sd),
                            fmt_value(*std::min_element(c.per_seed.begin(), c.per_seed.end())),
                            fmt_value(*std::max_element(c.per_seed.begin(), c.per_seed.end())))
              : "");
    for (const CellResult& c : r.cells)
      if (!c.stuck.empty()) out += fmt::format("  !!! {}: {}\n", c.name, c.stuck);
    for (const CellResult& c : r.cells)
      if (!c.not_run.empty()) out += fmt::format("  --- {}: not run: {}\n", c.name, c.not_run);
    for (const CellResult& c : r.cells) {
      if (c.explain.empty()) continue;
      out += fmt::format(
          "  why, {}{}:\n", c.name,
          c.seeds > 1 || c.first_seed != 1 ? fmt::format(" (seed {})", c.first_seed) : "");
      std::size_t from = 0;
      while (from <= c.explain.size()) {
        const std::size_t nl = std::min(c.explain.find('\n', from), c.explain.size());
        out += wrap(c.explain.substr(from, nl - from), "      ", 100);
        from = nl + 1;
      }
      // Every seed's quarters, so that the seeds in another regime show which and when.
      for (std::size_t k = 0; k < c.quarters_per_seed.size(); ++k)
        if (!c.quarters_per_seed[k].empty())
          out += fmt::format("      seed {} by quarter: {}\n", c.first_seed + static_cast<int>(k),
                             c.quarters_per_seed[k]);
    }
    if (!r.effects.empty())
      out += fmt::format("  {:<34} {:>14} {:>14} {:>9}  {:<22} {}\n", "effect (ratio)", "published",
                         "simulated", "2 se", "band", "agrees");
    for (const EffectResult& e : r.effects) {
      const std::string band = band_text(Band{e.low, e.high});
      if (!e.not_run.empty()) {
        out += fmt::format("  {:<34} {:>14} {:>14} {:>9}  {:<22} {}\n", e.name,
                           e.published ? fmt::format("{:.3f}", *e.published) : "-", "not run", "-",
                           band, "-");
        continue;
      }
      // "(noise)": a ratio within two standard errors would get the other verdict.
      out += fmt::format("  {:<34} {:>14} {:>14} {:>9}  {:<22} {}{}\n", e.name,
                         e.published ? fmt::format("{:.3f}", *e.published) : "-",
                         fmt::format("{:.3f}", e.simulated),
                         std::isfinite(e.se) ? fmt::format("{:.3f}", 2 * e.se) : "inf", band,
                         e.agrees ? "yes" : "NO", e.resolved ? "" : " (noise)");
    }
    out += "\n";
  }
  if (const Tally t = tally(results); t.effects > 0) {
    out += kLegend;
    if (with_summary) out += summary_line(results, true) + "\n";
  }
  return out;
}

std::string summary_line(const std::vector<ExperimentResult>& results, bool check) {
  const Tally t = tally(results);
  std::string line =
      fmt::format("{} of {} effects agree with their bands ({} of the {} verdicts are noise)",
                  t.agree, t.effects, t.noise, t.effects);
  int not_run = 0;
  for (const ExperimentResult& r : results)
    for (const EffectResult& e : r.effects) not_run += e.not_run.empty() ? 0 : 1;
  if (not_run > 0)
    line += fmt::format("; {} effect{} not run (a lock this build lacks)", not_run,
                        not_run == 1 ? "" : "s");
  if (!check)
    line += t.agree == t.effects
                ? "; the exit status does not reflect the verdicts (--check: exit 1 on any NO)"
                : fmt::format("; the exit status does not reflect the {} NO (--check: exit 1)",
                              t.effects - t.agree);
  return line;
}

bool any_stuck(const std::vector<ExperimentResult>& results) {
  for (const ExperimentResult& r : results)
    for (const CellResult& c : r.cells)
      if (!c.stuck.empty()) return true;
  return false;
}

Tally tally(const std::vector<ExperimentResult>& results) {
  Tally t;
  for (const ExperimentResult& r : results)
    for (const EffectResult& e : r.effects) {
      if (!e.not_run.empty()) continue;
      ++t.effects;
      if (e.agrees) ++t.agree;
      if (!e.resolved) ++t.noise;
    }
  return t;
}

bool all_agree(const std::vector<ExperimentResult>& results) {
  for (const ExperimentResult& r : results)
    for (const EffectResult& e : r.effects)
      if (!e.agrees && e.not_run.empty()) return false;
  return true;
}

}  // namespace pvlock::reproduce
