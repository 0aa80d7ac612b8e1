// SPDX-License-Identifier: GPL-2.0-only
#include "reproduce/experiment.hpp"

#include <fmt/core.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "reproduce/metric.hpp"

namespace pvlock::reproduce {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& file, const toml::source_region& r,
                       const std::string& key, const std::string& msg) {
  throw ExperimentError(
      fmt::format("{}:{}:{}: {}: {}", file, r.begin.line, r.begin.column, key, msg));
}

std::string req_string(const toml::table& t, const std::string& file, const std::string& key,
                       const std::string& path) {
  const toml::node* n = t.get(key);
  if (n == nullptr) fail(file, t.source(), path + key, "missing (a string is required)");
  if (!n->is_string()) fail(file, n->source(), path + key, "must be a string");
  return n->as_string()->get();
}

std::optional<double> opt_number(const toml::table& t, const std::string& file,
                                 const std::string& key, const std::string& path) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  if (auto v = n->value<double>()) return *v;
  fail(file, n->source(), path + key, "must be a number");
}

std::vector<std::string> string_list(const toml::table& t, const std::string& file,
                                     const std::string& key, const std::string& path) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) fail(file, n->source(), path + key, "must be an array of strings");
  for (const toml::node& e : *a) {
    if (!e.is_string()) fail(file, e.source(), path + key, "must be an array of strings");
    out.push_back(e.as_string()->get());
  }
  return out;
}

void reject_unknown(const toml::table& t, const std::string& file, const std::string& path,
                    std::initializer_list<std::string_view> known) {
  for (const auto& [k, v] : t) {
    if (std::find(known.begin(), known.end(), k.str()) == known.end())
      fail(file, v.source(), path + std::string(k.str()), "unknown key");
  }
}

}  // namespace

const Cell* Experiment::cell(const std::string& name) const {
  for (const Cell& c : cells)
    if (c.name == name) return &c;
  return nullptr;
}

Experiment load_experiment(const std::string& toml_path) {
  toml::table root;
  try {
    root = toml::parse_file(toml_path);
  } catch (const toml::parse_error& e) {
    throw ExperimentError(fmt::format("{}:{}:{}: {}", toml_path, e.source().begin.line,
                                      e.source().begin.column, e.description()));
  }
  const std::string& f = toml_path;
  reject_unknown(root, f, "",
                 {"id", "seed_file", "title", "claim", "seeds", "quick", "cell", "effect"});
  Experiment ex;
  ex.dir = fs::path(toml_path).parent_path().string();
  ex.id = req_string(root, f, "id", "");
  ex.seed_file = req_string(root, f, "seed_file", "");
  ex.title = req_string(root, f, "title", "");
  ex.claim = req_string(root, f, "claim", "");
  auto seed_count = [&](const toml::node& n, const std::string& key) {
    const auto v = n.value<std::int64_t>();
    if (!n.is_integer() || !v || *v < 1 || *v > 64)
      fail(f, n.source(), key, "must be an integer between 1 and 64");
    return static_cast<int>(*v);
  };
  if (const toml::node* n = root.get("seeds")) ex.seeds = seed_count(*n, "seeds");
  if (const toml::node* q = root.get("quick")) {
    if (!q->is_table()) fail(f, q->source(), "quick", "must be a table");
    reject_unknown(*q->as_table(), f, "quick.", {"set", "seeds"});
    ex.quick_overrides = string_list(*q->as_table(), f, "set", "quick.");
    if (const toml::node* n = q->as_table()->get("seeds"))
      ex.quick_seeds = seed_count(*n, "quick.seeds");
  }
  const toml::array* cells = root["cell"].as_array();
  if (cells == nullptr || cells->empty())
    fail(f, root.source(), "cell", "at least one [[cell]] is required");
  for (std::size_t i = 0; i < cells->size(); ++i) {
    const toml::table* t = (*cells)[i].as_table();
    const std::string path = fmt::format("cell[{}].", i);
    if (t == nullptr) fail(f, (*cells)[i].source(), path, "must be a table");
    reject_unknown(*t, f, path,
                   {"name", "scenario", "set", "metric", "published", "published_low",
                    "published_high", "unit", "requires", "quick"});
    Cell c;
    c.name = req_string(*t, f, "name", path);
    if (ex.cell(c.name) != nullptr)
      fail(f, t->source(), path + "name", "duplicate cell name '" + c.name + "'");
    const std::string scen = req_string(*t, f, "scenario", path);
    c.scenario = (fs::path(ex.dir) / scen).lexically_normal().string();
    if (!fs::exists(c.scenario))
      fail(f, t->get("scenario")->source(), path + "scenario", "no such file: " + c.scenario);
    c.overrides = string_list(*t, f, "set", path);
    if (const toml::node* m = t->get("metric")) {
      if (!m->is_string()) fail(f, m->source(), path + "metric", "must be a string");
      c.metric = m->as_string()->get();
      if (const std::string why = metric_error(c.metric); !why.empty())
        fail(f, m->source(), path + "metric", why);
    }
    c.published = opt_number(*t, f, "published", path);
    c.published_low = opt_number(*t, f, "published_low", path);
    c.published_high = opt_number(*t, f, "published_high", path);
    if (c.published_low.has_value() != c.published_high.has_value())
      fail(f, t->source(), path + "published_low", "published_low and published_high go together");
    if (c.published_low && !c.published) c.published = (*c.published_low + *c.published_high) / 2;
    c.unit = req_string(*t, f, "unit", path);
    c.requires_locks = string_list(*t, f, "requires", path);
    for (const std::string& lock : c.requires_locks)
      if (lock.empty()) fail(f, t->get("requires")->source(), path + "requires", "empty lock name");
    if (const toml::node* q = t->get("quick")) {
      if (!q->is_boolean()) fail(f, q->source(), path + "quick", "must be true or false");
      c.in_quick = q->as_boolean()->get();
    }
    ex.cells.push_back(std::move(c));
  }
  if (const toml::array* effects = root["effect"].as_array()) {
    for (std::size_t i = 0; i < effects->size(); ++i) {
      const toml::table* t = (*effects)[i].as_table();
      const std::string path = fmt::format("effect[{}].", i);
      if (t == nullptr) fail(f, (*effects)[i].source(), path, "must be a table");
      reject_unknown(*t, f, path, {"name", "numerator", "denominator", "low", "high", "factor"});
      Effect e;
      e.name = req_string(*t, f, "name", path);
      e.numerator = req_string(*t, f, "numerator", path);
      e.denominator = req_string(*t, f, "denominator", path);
      for (const std::string* ref : {&e.numerator, &e.denominator})
        if (ex.cell(*ref) == nullptr)
          fail(f, t->source(), path + (ref == &e.numerator ? "numerator" : "denominator"),
               "no cell named '" + *ref + "'");
      e.low = opt_number(*t, f, "low", path);
      e.high = opt_number(*t, f, "high", path);
      if (e.low.has_value() != e.high.has_value())
        fail(f, t->source(), path + (e.low ? "high" : "low"), "low and high go together");
      e.factor = opt_number(*t, f, "factor", path);
      if (e.factor && e.low)
        fail(f, t->get("factor")->source(), path + "factor",
             "give either a factor or low and high, not both");
      if (e.factor && !(*e.factor > 1))
        fail(f, t->get("factor")->source(), path + "factor", "must be greater than 1");
      if (e.low && !(*e.low < *e.high))
        fail(f, t->get("low")->source(), path + "low", "must be below high");
      const bool explicit_band = e.low.has_value() && e.high.has_value();
      if (!explicit_band &&
          (!ex.cell(e.numerator)->published || !ex.cell(e.denominator)->published))
        fail(f, t->source(), path + "low",
             "an effect between unpublished cells needs an explicit low and high");
      ex.effects.push_back(std::move(e));
    }
  }
  return ex;
}

std::vector<Experiment> load_experiments(const std::string& root) {
  std::vector<std::string> files;
  if (!fs::is_directory(root)) throw ExperimentError(root + ": not a directory");
  for (const auto& entry : fs::directory_iterator(root)) {
    const fs::path p = entry.path() / "experiment.toml";
    if (entry.is_directory() && fs::exists(p)) files.push_back(p.string());
  }
  std::sort(files.begin(), files.end());
  std::vector<Experiment> out;
  for (const std::string& p : files) out.push_back(load_experiment(p));
  return out;
}

Band tolerance_band(double published_ratio, const Effect& e) {
  if (e.low && e.high) return Band{*e.low, *e.high};
  if (e.factor) return Band{published_ratio / *e.factor, published_ratio * *e.factor};
  constexpr double kLarge = 1.3;
  if (published_ratio >= kLarge || published_ratio <= 1.0 / kLarge)
    return Band{published_ratio / kLarge, published_ratio * kLarge};
  // A small effect: the same direction by at least a third of its size, at most size + 0.15.
  constexpr double kMinShare = 1.0 / 3, kSlack = 0.15;
  const double size = published_ratio - 1.0;
  if (size > 0) return Band{1.0 + size * kMinShare, published_ratio + kSlack};
  if (size < 0) return Band{published_ratio - kSlack, 1.0 + size * kMinShare};
  return Band{1.0 - kSlack, 1.0 + kSlack};
}

std::string band_text(const Band& b) {
  constexpr double kOpen = 1e6;  // a ratio band's "no upper limit"
  if (!std::isfinite(b.high) || b.high >= kOpen) return fmt::format("> {:.3f}", b.low);
  if (b.low <= 0) return fmt::format("< {:.3f}", b.high);
  return fmt::format("[{:.3f}, {:.3f}]", b.low, b.high);
}

}  // namespace pvlock::reproduce
