// SPDX-License-Identifier: GPL-2.0-only
// A guest's CPU-time profile (run_to_json's "profile" -> VM -> "symbols") as text rows:
// the busiest symbol first, shares in hundredths of a percent that add up to exactly
// 100.00 % (largest-remainder rounding), so a reader can add the column and check it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace pvlock::output {

// (symbol, share in 1/100 %), sorted by share, ties in the JSON's (fixed symbol) order.
inline std::vector<std::pair<std::string, std::int64_t>> profile_rows(
    const nlohmann::ordered_json& symbols) {
  struct Row {
    std::string name;
    double ns;
    std::int64_t hundredths;
    double remainder;
  };
  std::vector<Row> rows;
  double total = 0;
  for (const auto& [sym, row] : symbols.items()) {
    const double ns = row["ns"].get<double>();
    rows.push_back(Row{sym, ns, 0, 0});
    total += ns;
  }
  std::vector<std::pair<std::string, std::int64_t>> out;
  if (!(total > 0)) return out;
  std::int64_t given = 0;
  for (Row& r : rows) {
    const double exact = 10000.0 * r.ns / total;
    r.hundredths = static_cast<std::int64_t>(std::floor(exact));
    r.remainder = exact - static_cast<double>(r.hundredths);
    given += r.hundredths;
  }
  // The hundredths lost to rounding down go to the largest remainders.
  std::vector<std::size_t> by_remainder(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) by_remainder[i] = i;
  std::stable_sort(by_remainder.begin(), by_remainder.end(), [&](std::size_t a, std::size_t b) {
    return rows[a].remainder > rows[b].remainder;
  });
  for (std::size_t k = 0; given < 10000 && k < by_remainder.size(); ++k, ++given)
    ++rows[by_remainder[k]].hundredths;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.ns > b.ns; });
  for (Row& r : rows) out.emplace_back(std::move(r.name), r.hundredths);
  return out;
}

}  // namespace pvlock::output
