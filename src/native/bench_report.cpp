// SPDX-License-Identifier: GPL-2.0-only
#include "native/bench_report.hpp"

#include <fmt/core.h>

#include <thread>

namespace pvlock::native {

nlohmann::ordered_json bench_row_json(const BenchRow& r) {
  nlohmann::ordered_json j;
  j["lock"] = r.lock;
  j["origin"] = r.origin;
  j["threads"] = r.threads;
  j["duration_s"] = r.duration_s;
  j["ops"] = r.ops;
  j["ops_per_s"] = r.ops_per_s;
  j["cpu_s"] = r.cpu_s;
  j["ops_per_cpu_s"] = r.ops_per_cpu_s;
  j["per_thread"] = {{"min", r.min_per_thread}, {"max", r.max_per_thread}};
  j["fairness"] = r.fairness;
  j["stuck"] = r.stuck;
  nlohmann::ordered_json counters = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < kLockEventCount; ++i)
    if (r.counters.v[i] != 0) counters[std::string(kLockEventNames[i])] = r.counters.v[i];
  j["counters"] = counters;
  return j;
}

nlohmann::ordered_json bench_json(const BenchOptions& o, const std::vector<BenchRow>& rows) {
  nlohmann::ordered_json j;
  j["benchmark"] = "pvlock bench";
  j["hardware_threads"] = std::thread::hardware_concurrency();
  j["config"] = {{"duration_s", o.duration_s},
                 {"cs_lines", o.cs_lines},
                 {"cs_ns", o.cs_ns},
                 {"outside_ns", o.outside_ns}};
  j["rows"] = nlohmann::ordered_json::array();
  for (const BenchRow& r : rows) j["rows"].push_back(bench_row_json(r));
  return j;
}

std::string bench_csv_header() {
  return "lock,origin,threads,duration_s,ops,ops_per_s,cpu_s,ops_per_cpu_s,min_per_thread,"
         "max_per_thread,fairness,stuck\n";
}

std::string bench_csv_row(const BenchRow& r) {
  return fmt::format("{},{},{},{:.3f},{},{:.0f},{:.3f},{:.0f},{},{},{:.4f},{}\n", r.lock, r.origin,
                     r.threads, r.duration_s, r.ops, r.ops_per_s, r.cpu_s, r.ops_per_cpu_s,
                     r.min_per_thread, r.max_per_thread, r.fairness, r.stuck ? 1 : 0);
}

std::string bench_table_header() {
  return fmt::format("{:<18} {:>7} {:>14} {:>14} {:>12} {:>12} {:>8}\n", "lock", "threads", "ops/s",
                     "ops/cpu-s", "min/thread", "max/thread", "fairness");
}

std::string bench_table_row(const BenchRow& r) {
  if (r.stuck)
    return fmt::format("{:<18} {:>7} {:>14}  !!! threads did not stop (stuck lock)\n", r.lock,
                       r.threads, "-");
  return fmt::format("{:<18} {:>7} {:>14.0f} {:>14.0f} {:>12} {:>12} {:>8.3f}\n", r.lock, r.threads,
                     r.ops_per_s, r.ops_per_cpu_s, r.min_per_thread, r.max_per_thread, r.fairness);
}

}  // namespace pvlock::native
