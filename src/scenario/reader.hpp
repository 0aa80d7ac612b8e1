// SPDX-License-Identifier: GPL-2.0-only
// Internal to the scenario parser: typed, strict reading of toml++ tables with error
// messages that name the place (file:line:col or the --set override) and the key path.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/parse.hpp"
#include "scenario/toml.hpp"
#include "scenario/toml_guard.hpp"

namespace pvlock::scenario::detail {

// One --set override: its canonical key path ("vm[0].guest.lock") and its text as written.
struct Override {
  std::string path;
  std::string text;
};

std::string_view type_name(const toml::node& n);

// File-wide context: which file, which overrides.
class Reader {
 public:
  Reader(std::string file, std::vector<Override> overrides)
      : file_(std::move(file)), overrides_(std::move(overrides)) {}
  const std::string& file() const { return file_; }
  // Where the value at `path` came from; `src` is its region in the file (empty if it was
  // created by an override).
  SourceRef where(const std::string& path, const toml::source_region& src) const;
  [[noreturn]] void fail(const std::string& path, const toml::source_region& src,
                         const std::string& message) const;

 private:
  const Override* find_override(const std::string& path, bool from_file) const;
  std::string file_;
  std::vector<Override> overrides_;
};

// One TOML table being read: every key asked for is "known"; finish() rejects the others.
class Section {
 public:
  // `path` is the table's key path ("" for the root), `title` how messages name it
  // ("[run]", "[[vm]]", "the top level").
  Section(const Reader& r, const toml::table& t, std::string path, std::string title)
      : r_(r), t_(t), path_(std::move(path)), title_(std::move(title)) {}

  const Reader& reader() const { return r_; }
  const toml::table& table() const { return t_; }
  const std::string& path() const { return path_; }
  const std::string& title() const { return title_; }
  std::string path_of(std::string_view key) const;
  SourceRef where(std::string_view key) const;  // of the key's value (or of the table)
  SourceRef where_table() const { return r_.where(path_, t_.source()); }

  // Marks `key` known and returns its value, or nullptr if absent.
  const toml::node* take(std::string_view key);
  void require(std::string_view key);  // error at the table if missing

  void read(std::string_view key, double& out, double lo, double hi);
  void read_positive(std::string_view key, double& out, double hi);  // (0, hi]
  void read(std::string_view key, std::int64_t& out, std::int64_t lo, std::int64_t hi);
  void read(std::string_view key, int& out, int lo, int hi);
  void read(std::string_view key, std::uint64_t& out, std::uint64_t hi);
  void read(std::string_view key, bool& out);
  void read(std::string_view key, std::string& out);  // non-empty string
  template <class E>
  void read_enum(std::string_view key, E& out,
                 std::initializer_list<std::pair<std::string_view, E>> names) {
    const toml::node* n = take(key);
    if (n == nullptr) return;
    const auto* s = n->as_string();
    std::string list;
    for (const auto& [name, value] : names) list += (list.empty() ? "" : ", ") + std::string(name);
    if (s == nullptr)
      fail(key, "expected a string (one of " + list + "), got " + std::string(type_name(*n)));
    for (const auto& [name, value] : names)
      if (s->get() == name) {
        out = value;
        return;
      }
    fail(key, "unknown value '" + unguard(s->get()) + "'; valid: " + list);
  }
  // A sub-table (nullptr if absent); an error if the key holds something else.
  const toml::table* subtable(std::string_view key);

  // The number at `key` (an integer or a float, finite); an error naming the key otherwise.
  double finite_number(std::string_view key, const toml::node& n) const;
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;
  [[noreturn]] void fail_table(const std::string& message) const;
  // Rejects every key that was never asked for.
  void finish() const;

 private:
  const Reader& r_;
  const toml::table& t_;
  std::string path_;
  std::string title_;
  std::vector<std::string> known_;
};

}  // namespace pvlock::scenario::detail
