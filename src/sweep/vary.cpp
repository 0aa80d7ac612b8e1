// SPDX-License-Identifier: GPL-2.0-only
#include "sweep/vary.hpp"

#include <charconv>
#include <cmath>
#include <set>

namespace pvlock::sweep {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> split_values(std::string_view list, bool& balanced) {
  std::vector<std::string> out;
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
      if (depth < 0) break;
    } else if (c == ',' && depth == 0) {
      out.emplace_back(trim(list.substr(start, i - start)));
      start = i + 1;
    }
  }
  balanced = quote == 0 && depth == 0;
  out.emplace_back(trim(list.substr(start)));
  return out;
}

Vary parse_vary(const std::string& arg) {
  auto fail = [&](const std::string& m) -> SweepError {
    return SweepError("--vary " + arg + ": " + m);
  };
  const auto eq = arg.find('=');
  if (eq == std::string::npos) throw fail("expected KEY=V1,V2,...");
  Vary v;
  v.key = std::string(trim(std::string_view(arg).substr(0, eq)));
  if (v.key.empty()) throw fail("empty key");
  bool balanced = true;
  v.values = split_values(std::string_view(arg).substr(eq + 1), balanced);
  if (!balanced) throw fail("unbalanced quotes or brackets in the value list");
  std::set<std::string> seen;
  for (const std::string& x : v.values) {
    if (x.empty()) throw fail("empty value in the list");
    if (!seen.insert(x).second) throw fail("value '" + x + "' is listed twice");
  }
  return v;
}

nlohmann::ordered_json typed_value(std::string_view v) {
  if (v == "true") return true;
  if (v == "false") return false;
  std::int64_t i = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), i);
  if (!v.empty() && ec == std::errc{} && p == v.data() + v.size()) return i;
  double d = 0;
  auto [q, ec2] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (!v.empty() && ec2 == std::errc{} && q == v.data() + v.size() && std::isfinite(d)) return d;
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"' &&
      v.substr(1, v.size() - 2).find_first_of("\"\\") == std::string_view::npos)
    return std::string(v.substr(1, v.size() - 2));
  return std::string(v);
}

std::vector<Combo> enumerate(const std::vector<Vary>& varies) {
  std::set<std::string> keys;
  for (const Vary& v : varies) {
    if (v.key == "run.seed")
      throw SweepError("--vary run.seed: use --seeds N to run each point with N seeds");
    if (!keys.insert(v.key).second)
      throw SweepError("--vary " + v.key + ": the key is varied twice");
  }
  std::vector<Combo> out(1);
  out[0].point = nlohmann::ordered_json::object();
  for (const Vary& v : varies) {
    std::vector<Combo> next;
    for (const Combo& c : out)
      for (const std::string& value : v.values) {
        Combo n = c;
        n.sets.push_back(v.key + "=" + value);
        n.point[v.key] = typed_value(value);
        next.push_back(std::move(n));
      }
    out = std::move(next);
  }
  return out;
}

}  // namespace pvlock::sweep
