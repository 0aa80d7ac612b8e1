// SPDX-License-Identifier: GPL-2.0-only
// Workload parameter helpers and error formatting (see parse.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "scenario/parse.hpp"

namespace pvlock::scenario {

namespace {

std::string_view value_type(const ParamValue& v) {
  switch (v.index()) {
    case 0:
      return "a boolean";
    case 1:
      return "an integer";
    case 2:
      return "a float";
    case 3:
      return "a string";
    default:
      return "a distribution table";
  }
}

const Param* find(const WorkloadSpec& w, std::string_view key) {
  const auto it = w.params.find(std::string(key));
  return it == w.params.end() ? nullptr : &it->second;
}

}  // namespace

std::string describe(const SourceRef& w) {
  if (!w.override_text.empty()) {
    // A key inside the value the override wrote ({dist = ...}: its mean) is named too.
    const std::string set_path = w.override_text.substr(0, w.override_text.find('='));
    const bool inside = w.key_path.size() > set_path.size() + 1 &&
                        w.key_path.compare(0, set_path.size(), set_path) == 0 &&
                        w.key_path[set_path.size()] == '.';
    return "--set " + w.override_text + (inside ? ": " + w.key_path : "");
  }
  std::string s = fmt::format("{}:{}:{}", w.file.empty() ? "<scenario>" : w.file, w.line, w.column);
  if (!w.key_path.empty()) s += ": " + w.key_path;
  return s;
}

void fail_at(const SourceRef& where, const std::string& message) {
  throw ScenarioError(describe(where) + ": " + message);
}

double param_double(const WorkloadSpec& w, std::string_view key, double fallback, double lo,
                    double hi) {
  const Param* p = find(w, key);
  if (p == nullptr) return fallback;
  double v = 0;
  if (const auto* i = std::get_if<std::int64_t>(&p->value))
    v = static_cast<double>(*i);
  else if (const auto* d = std::get_if<double>(&p->value))
    v = *d;
  else
    fail_at(p->where, fmt::format("expected a number, got {}", value_type(p->value)));
  if (!(v >= lo && v <= hi))
    fail_at(p->where, fmt::format("must be between {} and {}, got {}", lo, hi, v));
  return v;
}

std::int64_t param_int(const WorkloadSpec& w, std::string_view key, std::int64_t fallback,
                       std::int64_t lo, std::int64_t hi) {
  const Param* p = find(w, key);
  if (p == nullptr) return fallback;
  const auto* i = std::get_if<std::int64_t>(&p->value);
  if (i == nullptr)
    fail_at(p->where, fmt::format("expected an integer, got {}", value_type(p->value)));
  if (*i < lo || *i > hi)
    fail_at(p->where, fmt::format("must be between {} and {}, got {}", lo, hi, *i));
  return *i;
}

bool param_bool(const WorkloadSpec& w, std::string_view key, bool fallback) {
  const Param* p = find(w, key);
  if (p == nullptr) return fallback;
  const auto* b = std::get_if<bool>(&p->value);
  if (b == nullptr)
    fail_at(p->where, fmt::format("expected true or false, got {}", value_type(p->value)));
  return *b;
}

std::string param_string(const WorkloadSpec& w, std::string_view key, std::string fallback,
                         std::span<const std::string_view> allowed) {
  const Param* p = find(w, key);
  if (p == nullptr) return fallback;
  const auto* s = std::get_if<std::string>(&p->value);
  if (s == nullptr)
    fail_at(p->where, fmt::format("expected a string, got {}", value_type(p->value)));
  if (allowed.empty() || std::find(allowed.begin(), allowed.end(), *s) != allowed.end()) return *s;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  fail_at(p->where, "unknown value '" + *s + "'; valid: " + list);
}

Dist param_dist(const WorkloadSpec& w, std::string_view key, Dist fallback) {
  const Param* p = find(w, key);
  if (p == nullptr) return fallback;
  if (const auto* d = std::get_if<Dist>(&p->value)) return *d;
  double v = 0;
  if (const auto* i = std::get_if<std::int64_t>(&p->value))
    v = static_cast<double>(*i);
  else if (const auto* f = std::get_if<double>(&p->value))
    v = *f;
  else
    fail_at(p->where, fmt::format("expected a number (ns) or a {{dist = ...}} table, got {}",
                                  value_type(p->value)));
  if (!(v >= 0) || !std::isfinite(v))
    fail_at(p->where, fmt::format("must be a finite number >= 0, got {}", v));
  Dist d;
  d.kind = Dist::Kind::constant;
  d.mean = v;
  return d;
}

void reject_unknown_params(const WorkloadSpec& w, std::span<const std::string_view> known) {
  const Param* first = nullptr;
  std::string first_key;
  auto order = [](const Param& p) {
    return p.where.override_text.empty() ? std::pair{p.where.line, p.where.column}
                                         : std::pair{std::numeric_limits<int>::max(), 0};
  };
  for (const auto& [key, p] : w.params) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (first == nullptr || order(p) < order(*first)) {
      first = &p;
      first_key = key;
    }
  }
  if (first == nullptr) return;
  std::string list = "type";
  for (std::string_view k : known)
    if (k != "type") list += ", " + std::string(k);  // some lists name it, it comes first
  fail_at(first->where,
          "unknown key '" + first_key + "' in [workload] of type " + w.type + "; known: " + list);
}

}  // namespace pvlock::scenario
