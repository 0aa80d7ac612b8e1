// SPDX-License-Identifier: GPL-2.0-only
// Sweep results files: JSON lines {"point": {...}, "seed": s, "result": {...}}, one per
// simulated point; read (with the repair of a line cut short by an interrupted run),
// written, merged.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pvlock::sweep {

struct ResultLine {
  nlohmann::ordered_json point;  // {"key": value, ...}
  std::uint64_t seed = 0;
  nlohmann::ordered_json result;  // what `pvlock run --json` prints
};

// The identity of a point + seed (what resuming and merging compare).
std::string point_key(const nlohmann::ordered_json& point, std::uint64_t seed);
std::string format_line(const ResultLine& l);  // one line of JSON, no newline
// The result without its "perf" member (wall-clock measurements), for comparisons.
nlohmann::ordered_json comparable(const nlohmann::ordered_json& result);

// Reads a results file. A missing file is empty when `missing_ok`. Every line must be a
// result line (SweepError "FILE:LINE: message"), except a last line without its newline,
// which an interrupted run leaves: with `repair`, it is dropped from the file (truncated),
// otherwise it is an error.
std::vector<ResultLine> read_results(const std::string& path, bool missing_ok, bool repair);

// Merges results files into `out`: sorted by point (values compared as numbers or strings,
// in key order) then seed; a point present twice must have the same result outside "perf"
// (else SweepError), and is written once. Returns the number of lines written.
std::size_t merge_results(const std::vector<std::string>& inputs, const std::string& out);

}  // namespace pvlock::sweep
