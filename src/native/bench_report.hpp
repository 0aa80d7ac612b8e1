// SPDX-License-Identifier: GPL-2.0-only
// `pvlock bench` output: one JSON document, CSV, or an aligned table, one row per
// (lock, threads) point.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "native/bench.hpp"

namespace pvlock::native {

// {"benchmark": "pvlock bench", "hardware_threads", "config": {...}, "rows": [row...]},
// each row {"lock", "origin", "threads", "duration_s", "ops", "ops_per_s",
// "per_thread": {"min", "max"}, "fairness", "stuck", "counters": {non-zero events}}.
nlohmann::ordered_json bench_row_json(const BenchRow& row);
nlohmann::ordered_json bench_json(const BenchOptions& options, const std::vector<BenchRow>& rows);

std::string bench_csv_header();
std::string bench_csv_row(const BenchRow& row);

std::string bench_table_header();
std::string bench_table_row(const BenchRow& row);

}  // namespace pvlock::native
