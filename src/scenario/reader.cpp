// SPDX-License-Identifier: GPL-2.0-only
#include "scenario/reader.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include "scenario/toml_guard.hpp"

namespace pvlock::scenario::detail {

namespace {

// True if `prefix` is `path` or a parent of it ("vm[0]" of "vm[0].guest", not of "vm[01]").
bool is_path_prefix(std::string_view prefix, std::string_view path) {
  if (path.size() < prefix.size() || path.substr(0, prefix.size()) != prefix) return false;
  if (path.size() == prefix.size() || prefix.empty()) return true;
  return path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

std::string fmt_double(double v) { return fmt::format("{}", v); }

}  // namespace

std::string_view type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

const Override* Reader::find_override(const std::string& path, bool from_file) const {
  // The value at `path` was written by an override of it or of a parent (the last one wins).
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
    if (is_path_prefix(it->path, path)) return &*it;
  // A table the override created on its way to its key.
  if (!from_file)
    for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
      if (is_path_prefix(path, it->path)) return &*it;
  return nullptr;
}

SourceRef Reader::where(const std::string& path, const toml::source_region& src) const {
  SourceRef ref;
  ref.key_path = path;
  if (const Override* o = find_override(path, src.begin.line != 0)) {
    ref.file = "--set";
    ref.override_text = o->text;
    return ref;
  }
  ref.file = file_;
  ref.line = static_cast<int>(src.begin.line);
  ref.column = static_cast<int>(src.begin.column);
  return ref;
}

void Reader::fail(const std::string& path, const toml::source_region& src,
                  const std::string& message) const {
  fail_at(where(path, src), message);
}

std::string Section::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

SourceRef Section::where(std::string_view key) const {
  if (const toml::node* n = t_.get(key)) return r_.where(path_of(key), n->source());
  return r_.where(path_of(key), t_.source());
}

const toml::node* Section::take(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  return t_.get(key);
}

void Section::require(std::string_view key) {
  if (take(key) == nullptr) {
    SourceRef ref = r_.where(path_, t_.source());
    ref.key_path = path_of(key);
    fail_at(ref, "required key '" + std::string(key) + "' is missing in " + title_);
  }
}

double Section::finite_number(std::string_view key, const toml::node& n) const {
  double v = 0;
  if (const auto* i = n.as_integer())
    v = static_cast<double>(i->get());
  else if (const auto* f = n.as_floating_point())
    v = f->get();
  else
    fail(key, "expected a number, got " + std::string(type_name(n)));
  if (!std::isfinite(v)) fail(key, "must be a finite number, got " + fmt_double(v));
  return v;
}

void Section::read(std::string_view key, double& out, double lo, double hi) {
  const toml::node* n = take(key);
  if (n == nullptr) return;
  const double v = finite_number(key, *n);
  if (v < lo || v > hi)
    fail(key,
         "must be between " + fmt_double(lo) + " and " + fmt_double(hi) + ", got " + fmt_double(v));
  out = v;
}

void Section::read_positive(std::string_view key, double& out, double hi) {
  double v = out;
  // The whole range in one message: "> 0 and at most HI", never the lowest double.
  const std::string range = "must be > 0 and at most " + fmt_double(hi) + ", got ";
  const toml::node* n = take(key);
  if (n == nullptr) return;
  v = finite_number(key, *n);
  if (!(v > 0) || v > hi) fail(key, range + fmt_double(v));
  out = v;
}

void Section::read(std::string_view key, std::int64_t& out, std::int64_t lo, std::int64_t hi) {
  const toml::node* n = take(key);
  if (n == nullptr) return;
  const auto* i = n->as_integer();
  if (i == nullptr) fail(key, "expected an integer, got " + std::string(type_name(*n)));
  if (i->get() < lo || i->get() > hi)
    fail(key, fmt::format("must be between {} and {}, got {}", lo, hi, i->get()));
  out = i->get();
}

void Section::read(std::string_view key, int& out, int lo, int hi) {
  std::int64_t v = out;
  read(key, v, lo, hi);
  out = static_cast<int>(v);
}

void Section::read(std::string_view key, std::uint64_t& out, std::uint64_t hi) {
  std::int64_t v = static_cast<std::int64_t>(out);
  read(key, v, 0,
       static_cast<std::int64_t>(
           std::min<std::uint64_t>(hi, std::numeric_limits<std::int64_t>::max())));
  out = static_cast<std::uint64_t>(v);
}

void Section::read(std::string_view key, bool& out) {
  const toml::node* n = take(key);
  if (n == nullptr) return;
  const auto* b = n->as_boolean();
  if (b == nullptr) fail(key, "expected true or false, got " + std::string(type_name(*n)));
  out = b->get();
}

void Section::read(std::string_view key, std::string& out) {
  const toml::node* n = take(key);
  if (n == nullptr) return;
  const auto* s = n->as_string();
  if (s == nullptr) fail(key, "expected a string, got " + std::string(type_name(*n)));
  if (s->get().empty()) fail(key, "must not be empty");
  out = unguard(s->get());
}

const toml::table* Section::subtable(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) return nullptr;
  const auto* t = n->as_table();
  if (t == nullptr) fail(key, "expected a table, got " + std::string(type_name(*n)));
  return t;
}

void Section::fail(std::string_view key, const std::string& message) const {
  fail_at(where(key), message);
}

void Section::fail_table(const std::string& message) const { fail_at(where_table(), message); }

// Keys that took the kernel's spelling (the sysctl or module parameter they stand for,
// the unit in the docs): an old scenario's key names its new name in the error.
static const char* renamed_key(std::string_view name) {
  static constexpr std::pair<std::string_view, const char*> kRenamed[] = {
      {"ple_window_cycles", "ple_window"},
      {"ple_window_max_cycles", "ple_window_max"},
      {"halt_poll_grow", "halt_poll_ns_grow"},
      {"halt_poll_grow_start_ns", "halt_poll_ns_grow_start"},
      {"halt_poll_shrink", "halt_poll_ns_shrink"},
      {"min_granularity_ns", "sched_min_granularity_ns"},
      {"wakeup_granularity_ns", "sched_wakeup_granularity_ns"},
      {"eevdf_base_slice_ns", "sched_base_slice_ns"},
      {"migration_cost_ns", "sched_migration_cost_ns"},
      {"sched_slice_ns", "sched_min_granularity_ns"},
  };
  for (const auto& [from, to] : kRenamed)
    if (from == name) return to;
  return nullptr;
}

void Section::finish() const {
  // Report the first unknown key in file order (overrides, which have no place, last).
  const toml::key* first = nullptr;
  auto order = [](const toml::key& k) {
    const auto& b = k.source().begin;
    return b.line == 0 ? std::pair{std::numeric_limits<toml::source_index>::max(), b.column}
                       : std::pair{b.line, b.column};
  };
  for (const auto& [k, v] : t_) {
    if (std::find(known_.begin(), known_.end(), k.str()) != known_.end()) continue;
    if (first == nullptr || order(k) < order(*first)) first = &k;
  }
  if (first == nullptr) return;
  std::string list;
  for (const std::string& k : known_) list += (list.empty() ? "" : ", ") + k;
  const std::string name = unguard(first->str());
  const std::string path = path_of(name);
  const toml::node* value = t_.get(first->str());
  const toml::source_region& src =
      first->source().begin.line != 0 ? first->source() : value->source();
  std::string renamed;
  if (const char* to = renamed_key(name)) renamed = std::string(" (renamed '") + to + "')";
  r_.fail(path, src, "unknown key '" + name + "' in " + title_ + renamed + "; known: " + list);
}

}  // namespace pvlock::scenario::detail
