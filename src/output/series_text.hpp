// SPDX-License-Identifier: GPL-2.0-only
// A run's time series (harness/series.hpp) as text: one table per VM, one row per
// interval; event rates in thousands per second, waits in microseconds.
#pragma once

#include <fmt/core.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace pvlock::output {

// `series` is run_to_json's "series" object.
inline void print_series(const nlohmann::ordered_json& series) {
  // Short headers, in the column order of the JSON; "k/s" columns are divided by 1000.
  struct Col {
    const char* name;
    const char* header;
    bool per_ms;
  };
  static constexpr Col kCols[] = {
      {"t_ms", "t_ms", false},
      {"score", "score", false},
      {"steal_pct", "steal%", false},
      {"preemptions", "preempt", true},
      {"holder_preemptions", "pre.hold", true},
      {"waiter_preemptions", "pre.wait", true},
      {"ple_exits", "ple", true},
      {"ple_yields", "ple.yld", true},
      {"kicks", "kick", true},
      {"kick_yields", "kick.yld", true},
      {"halt_blocks", "halt", true},
      {"queued_wake_wait_us", "qwait.us", false},
      {"pv_wait_early", "w.early", true},
      {"pv_wait_early_preempted", "w.e.pre", true},
      {"pv_wait_head", "w.head", true},
      {"pv_wait_node", "w.node", true},
      {"kick_to_run_us", "kick.us", false},
      {"pv_lock_stealing", "steals", true},
  };
  const auto& cols = series["columns"];
  fmt::print("\nseries every {:g} ms of simulated time (event rates in k/s, waits in us)\n",
             series["interval_ns"].get<double>() / 1e6);
  for (const auto& [vm, s] : series["vms"].items()) {
    const std::string unit = s["score_unit"].get<std::string>();
    fmt::print("\n{} (score: {})\n", vm, unit.empty() ? "not a rate" : unit);
    for (const Col& c : kCols) fmt::print("{:>9}", c.header);
    fmt::print("\n");
    for (const auto& row : s["rows"]) {
      for (std::size_t i = 0; i < cols.size() && i < std::size(kCols); ++i) {
        const double v = row[i].get<double>();
        const Col& c = kCols[i];
        if (i == 0)
          fmt::print("{:>9.1f}", v);
        else if (c.per_ms)
          fmt::print("{:>9.1f}", v / 1000.0);
        else
          fmt::print("{:>9.{}f}", v, v >= 1000 ? 0 : 1);
      }
      fmt::print("\n");
    }
  }
}

}  // namespace pvlock::output
