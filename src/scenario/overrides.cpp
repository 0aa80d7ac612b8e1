// SPDX-License-Identifier: GPL-2.0-only
#include "scenario/overrides.hpp"

#include <charconv>
#include <optional>
#include <string_view>

#include "scenario/toml_guard.hpp"

namespace pvlock::scenario::detail {

namespace {

struct Segment {
  std::string name;
  std::optional<std::size_t> index;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

[[noreturn]] void fail_override(const std::string& text, const std::string& message) {
  throw ScenarioError("--set " + text + ": " + message);
}

// "vm[0].guest.lock" -> {vm,0} {guest} {lock}; nullopt if malformed.
std::optional<std::vector<Segment>> parse_path(std::string_view path) {
  std::vector<Segment> out;
  while (true) {
    Segment seg;
    std::size_t i = 0;
    while (i < path.size() && is_key_char(path[i])) ++i;
    if (i == 0) return std::nullopt;
    seg.name = std::string(path.substr(0, i));
    path.remove_prefix(i);
    if (!path.empty() && path.front() == '[') {
      const auto close = path.find(']');
      if (close == std::string_view::npos || close == 1) return std::nullopt;
      std::size_t idx = 0;
      const auto digits = path.substr(1, close - 1);
      const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), idx);
      if (ec != std::errc{} || p != digits.data() + digits.size()) return std::nullopt;
      seg.index = idx;
      path.remove_prefix(close + 1);
    }
    out.push_back(std::move(seg));
    if (path.empty()) return out;
    if (path.front() != '.') return std::nullopt;
    path.remove_prefix(1);
  }
}

// The value as TOML (int, float, bool, string, inline table, ...), else a bare-word string;
// guarded like the file (toml_guard.hpp): strings are unguarded when they are read.
toml::table parse_value(std::string_view text, const std::string& override_text) {
  std::string guarded;
  if (const auto p = guard(text, guarded)) fail_override(override_text, p->message);
  try {
    toml::table t = toml::parse("v = " + guarded, std::string_view("--set"));
    if (t.size() == 1 && t.contains("v")) return t;
  } catch (const toml::parse_error&) {
  }
  toml::table t;
  t.insert("v", guarded);
  return t;
}

}  // namespace

std::vector<Override> apply_overrides(toml::table& root, const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const std::string& raw : sets) {
    const auto eq = raw.find('=');
    if (eq == std::string::npos) fail_override(raw, "expected key.path=value");
    const std::string text = std::string(trim(std::string_view(raw).substr(0, eq))) + "=" +
                             std::string(trim(std::string_view(raw).substr(eq + 1)));
    const auto segments = parse_path(trim(std::string_view(raw).substr(0, eq)));
    if (!segments)
      fail_override(text,
                    "malformed key path (expected names joined by '.', with [N] after an "
                    "array name, e.g. vm[0].guest.lock)");
    toml::table value = parse_value(trim(std::string_view(raw).substr(eq + 1)), text);

    toml::table* cur = &root;
    std::string path;
    for (std::size_t i = 0; i < segments->size(); ++i) {
      const Segment& seg = (*segments)[i];
      const bool last = i + 1 == segments->size();
      path += (path.empty() ? "" : ".") + seg.name;
      toml::node* node = cur->get(seg.name);
      if (seg.index) {
        const std::string elem = path + "[" + std::to_string(*seg.index) + "]";
        if (node == nullptr)
          fail_override(text, "no " + elem + ": there is no '" + path + "' array" +
                                  (root.contains("host") || seg.name != "vm"
                                       ? ""
                                       : " (a bare-metal scenario sets guest.* and workload.*)"));
        auto* arr = node->as_array();
        if (arr == nullptr) fail_override(text, "'" + path + "' is not an array, cannot index it");
        if (*seg.index >= arr->size())
          fail_override(text,
                        "no " + elem + ": '" + path + "' has " + std::to_string(arr->size()) +
                            " element(s)" +
                            (seg.name == "vm"
                                 ? " ([N] indexes the [[vm]] tables of the file, not the VMs a "
                                   "table's count makes: vm[0].count = 2 is two VMs, vm0 and vm1, "
                                   "both set through vm[0])"
                                 : ""));
        if (last) fail_override(text, "name a key inside " + elem + ", e.g. " + elem + ".count");
        auto* t = (*arr)[*seg.index].as_table();
        if (t == nullptr) fail_override(text, elem + " is not a table");
        cur = t;
        path = elem;
        continue;
      }
      if (last) {
        cur->insert_or_assign(seg.name, std::move(*value.get("v")));
        break;
      }
      if (node == nullptr) {
        cur = cur->insert(seg.name, toml::table{}).first->second.as_table();
      } else if (auto* t = node->as_table()) {
        cur = t;
      } else if (node->is_array()) {
        fail_override(text, "'" + path + "' is an array: index it, e.g. " + path + "[0]");
      } else {
        fail_override(text, "'" + path + "' is not a table");
      }
    }
    out.push_back(Override{path, text});
  }
  return out;
}

}  // namespace pvlock::scenario::detail
