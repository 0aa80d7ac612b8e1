// SPDX-License-Identifier: GPL-2.0-only
#include "sensitivity/screening.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "reproduce/metric.hpp"
#include "reproduce/uncertainty.hpp"
#include "scenario/parse.hpp"

namespace pvlock::sensitivity {

namespace {

using json = nlohmann::ordered_json;

// The keys a list of "key=value" overrides sets.
std::set<std::string> keys_of(const std::vector<std::string>& sets) {
  std::set<std::string> out;
  for (const std::string& s : sets) out.insert(s.substr(0, s.find('=')));
  return out;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

struct CellScenario {
  std::vector<std::string> workload_types;  // per [[vm]]
  bool bare_metal = false;
};

// The overrides that put constant `c` at `v` in a cell's scenario: one per VM it applies to.
std::vector<std::string> overrides_for(const model::Constant& c, double v, const CellScenario& s) {
  const bool per_vm = !c.workload.empty() || c.id.rfind("guest.", 0) == 0;
  if (!per_vm) return {model::override_key(c, 0) + "=" + model::override_value(c, v)};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.workload_types.size(); ++i)
    if (c.workload.empty() || s.workload_types[i] == c.workload)
      out.push_back(model::override_key(c, static_cast<int>(i)) + "=" +
                    model::override_value(c, v));
  return out;
}

bool applies(const model::Constant& c, const CellScenario& s) {
  if (s.bare_metal && c.id.rfind("host.", 0) == 0) return false;
  if (c.workload.empty()) return true;
  return std::find(s.workload_types.begin(), s.workload_types.end(), c.workload) !=
         s.workload_types.end();
}

// True if a cell's own overrides set `c` (in any VM): the constant is that cell's treatment.
bool set_by(const model::Constant& c, const std::set<std::string>& keys, std::size_t vms) {
  for (std::size_t i = 0; i < std::max<std::size_t>(vms, 1); ++i)
    if (keys.count(model::override_key(c, static_cast<int>(i))) != 0) return true;
  return false;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::nan("") : s / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json value_json(const model::Constant& c, double v) {
  return c.integer ? json(static_cast<long long>(std::llround(v))) : json(v);
}

}  // namespace

namespace {

// A scenario given where the experiment goes would fail on its first scenario key ("host:
// unknown key"); say what the file is instead.
void reject_scenario_file(const std::string& path) {
  std::ifstream in(path);
  bool cells = false, scenario = false;
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const std::string_view l = std::string_view(line).substr(first);
    cells = cells || l.starts_with("[[cell]]");
    scenario = scenario || l.starts_with("[[vm]]") || l.starts_with("[workload]") ||
               l.starts_with("[host]");
  }
  if (scenario && !cells)
    throw SensitivityError(path +
                           ": a scenario file, not an experiment (an experiment.toml, whose "
                           "[[cell]] tables name scenarios); `pvlock run` runs a scenario");
}

}  // namespace

Plan make_plan(const Options& o) {
  if (o.trajectories < 1 || o.trajectories > 1000)
    throw SensitivityError(
        fmt::format("--trajectories: must be between 1 and 1000, got {}", o.trajectories));
  if (o.samples < 2 || o.samples > 100000)
    throw SensitivityError(
        fmt::format("--samples: must be between 2 and 100000, got {}", o.samples));
  if (o.seeds < 0 || o.seeds > 1000)
    throw SensitivityError(fmt::format("--seeds: must be between 1 and 1000, got {}", o.seeds));
  Plan p;
  p.options = o;
  std::string path = o.experiment;
  if (std::filesystem::is_directory(path)) path += "/experiment.toml";
  if (!std::filesystem::exists(path))
    throw SensitivityError(o.experiment + ": no experiment.toml there");
  reject_scenario_file(path);
  try {
    p.experiment = reproduce::load_experiment(path);
  } catch (const reproduce::ExperimentError& e) {
    throw SensitivityError(e.what());
  }
  const reproduce::Experiment& ex = p.experiment;
  if (ex.effects.empty()) throw SensitivityError(path + ": the experiment has no [[effect]]");
  for (std::size_t c = 0; c < ex.cells.size(); ++c)
    for (const reproduce::Effect& e : ex.effects)
      if (e.numerator == ex.cells[c].name || e.denominator == ex.cells[c].name) {
        p.cells.push_back(c);
        break;
      }

  // What each cell runs: its VMs' workloads, the keys it sets.
  std::vector<CellScenario> scen(p.cells.size());
  std::vector<std::set<std::string>> cell_keys(p.cells.size());
  for (std::size_t i = 0; i < p.cells.size(); ++i) {
    const reproduce::Cell& cell = ex.cells[p.cells[i]];
    std::vector<std::string> sets = o.quick ? ex.quick_overrides : std::vector<std::string>{};
    sets.insert(sets.end(), cell.overrides.begin(), cell.overrides.end());
    try {
      const scenario::Scenario sc = scenario::load_scenario_file(cell.scenario, sets);
      scen[i].bare_metal = sc.bare_metal();
      for (const scenario::VmSpec& vm : sc.vms) scen[i].workload_types.push_back(vm.workload.type);
    } catch (const scenario::ScenarioError& e) {
      throw SensitivityError(cell.name + ": " + e.what());
    }
    cell_keys[i] = keys_of(cell.overrides);
  }
  auto treatment = [&](const model::Constant& c) {
    for (std::size_t i = 0; i < p.cells.size(); ++i)
      if (set_by(c, cell_keys[i], scen[i].workload_types.size())) return true;
    return false;
  };
  auto used = [&](const model::Constant& c) {
    for (const CellScenario& s : scen)
      if (applies(c, s)) return true;
    return false;
  };

  if (o.params == "estimates") {
    for (const model::Constant& c : model::constants()) {
      if (c.provenance != model::Provenance::estimate || !c.range || !used(c)) continue;
      if (treatment(c))
        p.excluded.emplace_back(c.id, "a cell sets it (the experiment's treatment)");
      else
        p.params.push_back(&c);
    }
  } else {
    for (const std::string& id : split(o.params)) {
      const model::Constant* c = model::find_constant(id);
      if (c == nullptr)
        throw SensitivityError("--params: no constant '" + id + "' (pvlock costs lists them)");
      if (!c->range) throw SensitivityError("--params: " + id + " has no range to screen");
      if (!used(*c))
        throw SensitivityError("--params: " + id + " is not used by this experiment's cells");
      if (treatment(*c))
        throw SensitivityError("--params: " + id +
                               " is set by a cell (the experiment's treatment)");
      if (std::find(p.params.begin(), p.params.end(), c) != p.params.end())
        throw SensitivityError("--params: " + id + " given twice");
      p.params.push_back(c);
    }
  }
  if (p.params.empty()) throw SensitivityError("--params: no constant to screen");

  const int k = static_cast<int>(p.params.size());
  p.design = o.method == Method::morris ? morris(k, o.trajectories, o.design_seed)
                                        : lhs(k, o.samples, o.design_seed);
  p.seeds = o.seeds > 0 ? o.seeds : ex.seed_count(o.quick);

  for (std::size_t r = 0; r < p.design.rows.size(); ++r) {
    json x = json::object();
    for (int j = 0; j < k; ++j) {
      const model::Constant& c = *p.params[static_cast<std::size_t>(j)];
      x[c.id] = value_json(c, to_value(c, p.design.rows[r][static_cast<std::size_t>(j)]));
    }
    for (std::size_t i = 0; i < p.cells.size(); ++i) {
      const reproduce::Cell& cell = ex.cells[p.cells[i]];
      sweep::PointSpec pt;
      pt.scenario = cell.scenario;
      if (o.quick) pt.sets = ex.quick_overrides;
      pt.sets.insert(pt.sets.end(), cell.overrides.begin(), cell.overrides.end());
      pt.sets.push_back("run.seed=1");
      for (int j = 0; j < k; ++j) {
        const model::Constant& c = *p.params[static_cast<std::size_t>(j)];
        for (std::string& s :
             overrides_for(c, to_value(c, p.design.rows[r][static_cast<std::size_t>(j)]), scen[i]))
          pt.sets.push_back(std::move(s));
      }
      pt.point = json{{"row", r}, {"cell", cell.name}, {"x", x}};
      pt.label = fmt::format("row {} / {}", r, cell.name);
      p.points.push_back(std::move(pt));
    }
  }
  return p;
}

json reduce_run(const Plan& plan, const sweep::PointSpec& point, const json& run) {
  if (run.contains("liveness")) return json{{"value", nullptr}};
  const std::string name = point.point.at("cell").get<std::string>();
  const reproduce::Cell* cell = plan.experiment.cell(name);
  return json{{"value", number(reproduce::extract_metric(run, cell->metric))}};
}

json analyse(const Plan& plan, const std::vector<sweep::ResultLine>& lines) {
  std::map<std::string, double> value_of;
  for (const sweep::ResultLine& l : lines) {
    const json& v = l.result.contains("value") ? l.result.at("value") : json(nullptr);
    value_of[sweep::point_key(l.point, l.seed)] = v.is_number() ? v.get<double>() : std::nan("");
  }
  const std::size_t rows = plan.design.rows.size(), ncells = plan.cells.size();
  // per_seed[r][i]: cell plan.cells[i]'s figure at row r, per seed.
  std::vector<std::vector<std::vector<double>>> per_seed(rows,
                                                         std::vector<std::vector<double>>(ncells));
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < ncells; ++i)
      for (int s = 1; s <= plan.seeds; ++s) {
        const sweep::PointSpec& pt = plan.points[r * ncells + i];
        const auto it = value_of.find(sweep::point_key(pt.point, static_cast<std::uint64_t>(s)));
        if (it == value_of.end())
          throw SensitivityError(fmt::format(
              "the results lack row {} of cell '{}' with seed {} (run the missing shards, or "
              "resume without --shard)",
              r, pt.point.at("cell").get<std::string>(), s));
        per_seed[r][i].push_back(it->second);
      }

  const reproduce::Experiment& ex = plan.experiment;
  const std::size_t k = plan.params.size();
  json out;
  out["experiment"] = ex.id;
  out["method"] = plan.options.method == Method::morris ? "morris" : "lhs";
  if (plan.options.method == Method::morris)
    out["trajectories"] = plan.options.trajectories;
  else
    out["samples"] = plan.options.samples;
  out["rows"] = rows;
  out["seeds"] = plan.seeds;
  out["quick"] = plan.options.quick;
  out["runs"] = rows * ncells * static_cast<std::size_t>(plan.seeds);
  json cs = json::array();
  for (const model::Constant* c : plan.params)
    cs.push_back({{"id", c->id},
                  {"value", c->value},
                  {"low", c->range->low},
                  {"high", c->range->high},
                  {"scale", log_scale(*c) ? "log" : "linear"}});
  out["constants"] = cs;
  json excluded = json::array();
  for (const auto& [id, why] : plan.excluded) excluded.push_back({{"id", id}, {"why", why}});
  out["excluded"] = excluded;

  auto index_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < ncells; ++i)
      if (ex.cells[plan.cells[i]].name == name) return i;
    return ncells;
  };
  json effects = json::array();
  for (const reproduce::Effect& e : ex.effects) {
    const std::size_t a = index_of(e.numerator), b = index_of(e.denominator);
    const reproduce::Cell& na = ex.cells[plan.cells[a]];
    const reproduce::Cell& nb = ex.cells[plan.cells[b]];
    std::optional<double> published;
    if (na.published && nb.published && *nb.published != 0)
      published = *na.published / *nb.published;
    const reproduce::Band band = reproduce::tolerance_band(published.value_or(1.0), e);
    std::vector<double> y(rows), se(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      const double m = mean(per_seed[r][b]);
      y[r] = m != 0 ? mean(per_seed[r][a]) / m : std::nan("");
      se[r] = reproduce::ratio_standard_error(per_seed[r][a], per_seed[r][b]);
    }
    json ej;
    ej["name"] = e.name;
    ej["published"] = published ? json(*published) : json(nullptr);
    ej["band"] = {{"low", band.low}, {"high", band.high}};
    double lo = INFINITY, hi = -INFINITY;
    json reached = json::array();
    for (std::size_t r = 0; r < rows; ++r) {
      if (!std::isfinite(y[r])) continue;
      lo = std::min(lo, y[r]);
      hi = std::max(hi, y[r]);
      if (band.low <= y[r] && y[r] <= band.high)
        reached.push_back({{"row", r}, {"ratio", y[r]}, {"x", plan.points[r * ncells].point["x"]}});
    }
    ej["range"] = {{"low", number(lo)}, {"high", number(hi)}};
    json ratios = json::array();  // every row's ratio, in row order
    for (double v : y) ratios.push_back(number(v));
    ej["ratios"] = ratios;
    ej["reached"] = !reached.empty();
    ej["reached_rows"] = reached;
    const double noise = median(se);
    const double floor =
        plan.options.method == Method::morris ? std::sqrt(2.0) * noise / kMorrisDelta : noise;
    ej["noise"] = {{"ratio_se", number(noise)}, {"ee_floor", number(floor)}};
    json ranking = json::array();
    if (plan.options.method == Method::morris) {
      std::vector<std::vector<double>> ee(k);
      for (std::size_t r = 1; r < rows; ++r) {
        const int j = plan.design.step_of[r];
        if (j < 0 || !std::isfinite(y[r]) || !std::isfinite(y[r - 1])) continue;
        const double du = plan.design.rows[r][static_cast<std::size_t>(j)] -
                          plan.design.rows[r - 1][static_cast<std::size_t>(j)];
        ee[static_cast<std::size_t>(j)].push_back((y[r] - y[r - 1]) / du);
      }
      struct Row {
        std::size_t j;
        double mu_star, mu, sigma;
        std::size_t n;
      };
      std::vector<Row> rs;
      for (std::size_t j = 0; j < k; ++j) {
        double s = 0, sa = 0;
        for (double v : ee[j]) s += v, sa += std::fabs(v);
        const double n = static_cast<double>(ee[j].size());
        const double mu = n > 0 ? s / n : std::nan(""), mu_star = n > 0 ? sa / n : std::nan("");
        double var = 0;
        for (double v : ee[j]) var += (v - mu) * (v - mu);
        rs.push_back({j, mu_star, mu, n > 1 ? std::sqrt(var / (n - 1)) : 0.0, ee[j].size()});
      }
      std::stable_sort(rs.begin(), rs.end(), [](const Row& x, const Row& z) {
        const double a1 = std::isfinite(x.mu_star) ? x.mu_star : -1;
        const double a2 = std::isfinite(z.mu_star) ? z.mu_star : -1;
        return a1 > a2;
      });
      for (const Row& r : rs)
        ranking.push_back({{"id", plan.params[r.j]->id},
                           {"mu_star", number(r.mu_star)},
                           {"mu", number(r.mu)},
                           {"sigma", number(r.sigma)},
                           {"effects", r.n},
                           {"above_noise", std::isfinite(r.mu_star) && r.mu_star > floor}});
    } else {
      struct Row {
        std::size_t j;
        double corr;
      };
      std::vector<Row> rs;
      for (std::size_t j = 0; j < k; ++j) {
        double sx = 0, sy = 0, n = 0;
        for (std::size_t r = 0; r < rows; ++r)
          if (std::isfinite(y[r])) sx += plan.design.rows[r][j], sy += y[r], n += 1;
        double cxy = 0, cxx = 0, cyy = 0;
        for (std::size_t r = 0; r < rows; ++r)
          if (std::isfinite(y[r])) {
            const double dx = plan.design.rows[r][j] - sx / n, dy = y[r] - sy / n;
            cxy += dx * dy, cxx += dx * dx, cyy += dy * dy;
          }
        rs.push_back({j, cxx > 0 && cyy > 0 ? cxy / std::sqrt(cxx * cyy) : std::nan("")});
      }
      std::stable_sort(rs.begin(), rs.end(), [](const Row& x, const Row& z) {
        const double a1 = std::isfinite(x.corr) ? std::fabs(x.corr) : -1;
        const double a2 = std::isfinite(z.corr) ? std::fabs(z.corr) : -1;
        return a1 > a2;
      });
      for (const Row& r : rs)
        ranking.push_back({{"id", plan.params[r.j]->id}, {"corr", number(r.corr)}});
    }
    ej["ranking"] = ranking;
    effects.push_back(std::move(ej));
  }
  // The rows that land in every effect's band at once: a combination of the constants at
  // which the model reproduces the whole experiment.
  json joint = json::array();
  for (std::size_t r = 0; r < rows; ++r) {
    bool all = !effects.empty();
    for (const json& e : effects) {
      bool hit = false;
      for (const json& x : e["reached_rows"]) hit = hit || x["row"].get<std::size_t>() == r;
      all = all && hit;
    }
    if (all) joint.push_back({{"row", r}, {"x", plan.points[r * ncells].point["x"]}});
  }
  out["effects"] = effects;
  out["all_effects_reached_rows"] = joint;
  return out;
}

std::string to_text(const json& a) {
  auto f = [](const json& v) {
    return v.is_number() ? fmt::format("{:.4g}", v.get<double>()) : std::string("-");
  };
  std::string out = fmt::format(
      "sensitivity of {}: {} over {} constants, {} rows x {} seeds ({} runs)\n",
      a["experiment"].get<std::string>(), a["method"].get<std::string>(), a["constants"].size(),
      a["rows"].get<std::size_t>(), a["seeds"].get<int>(), a["runs"].get<std::size_t>());
  for (const json& x : a["excluded"])
    out += fmt::format("  left out: {} ({})\n", x["id"].get<std::string>(),
                       x["why"].get<std::string>());
  const bool morris = a["method"] == "morris";
  for (const json& e : a["effects"]) {
    out += fmt::format("\n{}: published {}, band [{}, {}]\n", e["name"].get<std::string>(),
                       f(e["published"]), f(e["band"]["low"]), f(e["band"]["high"]));
    out += fmt::format(
        "  simulated ratio over the box: {} .. {}; {}\n", f(e["range"]["low"]),
        f(e["range"]["high"]),
        e["reached"].get<bool>()
            ? fmt::format("{} rows land in the band (first: row {})", e["reached_rows"].size(),
                          e["reached_rows"][0]["row"].get<std::size_t>())
            : std::string("no row lands in the band"));
    out += fmt::format("  seeds' noise: ratio se {}{}\n", f(e["noise"]["ratio_se"]),
                       morris ? ", elementary-effect floor " + f(e["noise"]["ee_floor"]) : "");
    if (morris) {
      out += fmt::format("  {:<34} {:>9} {:>9} {:>9}\n", "constant", "mu*", "mu", "sigma");
      for (const json& r : e["ranking"])
        out += fmt::format("  {:<34} {:>9} {:>9} {:>9}{}\n", r["id"].get<std::string>(),
                           f(r["mu_star"]), f(r["mu"]), f(r["sigma"]),
                           r["above_noise"].get<bool>() ? "" : "  (within noise)");
    } else {
      out += fmt::format("  {:<34} {:>9}\n", "constant", "corr");
      for (const json& r : e["ranking"])
        out += fmt::format("  {:<34} {:>9}\n", r["id"].get<std::string>(), f(r["corr"]));
    }
  }
  out += fmt::format("\nrows landing in every effect's band at once: {}\n",
                     a["all_effects_reached_rows"].size());
  return out;
}

}  // namespace pvlock::sensitivity
