// SPDX-License-Identifier: GPL-2.0-only
// Lock statistics as text, laid out like /proc/lock_stat: one block per VM, lock instances
// sorted by contentions (as lock_stat sorts its classes), times in µs with two decimals.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pvlock::output {

// `lockstat` is run_to_json's "lockstat" object ({vm: [rows]}); at most `top` rows per VM.
inline void print_lockstat(const nlohmann::ordered_json& lockstat, std::size_t top = 20) {
  auto us = [](const nlohmann::ordered_json& v) { return v.get<double>() / 1000.0; };
  for (const auto& [vm, rows] : lockstat.items()) {
    std::vector<const nlohmann::ordered_json*> order;
    for (const auto& r : rows) order.push_back(&r);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
      return (*a)["contentions"].template get<std::uint64_t>() >
             (*b)["contentions"].template get<std::uint64_t>();
    });
    fmt::print("\nlock_stat {} (measured window; times in us)\n", vm);
    fmt::print(
        "{:>28} {:>11} {:>11} {:>11} {:>11} {:>14} {:>11} {:>11} {:>12} {:>11} {:>11} "
        "{:>14} {:>11}\n",
        "class name", "con-bounces", "contentions", "waittime-min", "waittime-max",
        "waittime-total", "waittime-avg", "acq-bounces", "acquisitions", "holdtime-min",
        "holdtime-max", "holdtime-total", "holdtime-avg");
    std::size_t shown = 0;
    for (const auto* r : order) {
      if (shown == top) break;
      const auto& x = *r;
      fmt::print(
          "{:>28} {:>11} {:>11} {:>11.2f} {:>11.2f} {:>14.2f} {:>11.2f} {:>11} {:>12} "
          "{:>11.2f} {:>11.2f} {:>14.2f} {:>11.2f}\n",
          x["name"].get<std::string>(), x["con_bounces"].get<std::uint64_t>(),
          x["contentions"].get<std::uint64_t>(), us(x["wait_min_ns"]), us(x["wait_max_ns"]),
          us(x["wait_total_ns"]), us(x["wait_avg_ns"]), x["acq_bounces"].get<std::uint64_t>(),
          x["acquisitions"].get<std::uint64_t>(), us(x["hold_min_ns"]), us(x["hold_max_ns"]),
          us(x["hold_total_ns"]), us(x["hold_avg_ns"]));
      ++shown;
    }
    if (order.size() > shown)
      fmt::print("{:>28} ({} more lock instances in --json)\n", "...", order.size() - shown);
  }
}

}  // namespace pvlock::output
