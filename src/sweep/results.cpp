// SPDX-License-Identifier: GPL-2.0-only
#include "sweep/results.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sweep/vary.hpp"

namespace pvlock::sweep {

std::string point_key(const nlohmann::ordered_json& point, std::uint64_t seed) {
  return nlohmann::ordered_json{{"point", point}, {"seed", seed}}.dump();
}

std::string format_line(const ResultLine& l) {
  nlohmann::ordered_json j;
  j["point"] = l.point;
  j["seed"] = l.seed;
  j["result"] = l.result;
  return j.dump();
}

nlohmann::ordered_json comparable(const nlohmann::ordered_json& result) {
  nlohmann::ordered_json r = result;
  if (r.is_object()) r.erase("perf");
  return r;
}

namespace {

ResultLine parse_line(const std::string& text, const std::string& where) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw SweepError(where + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("point") || !j["point"].is_object() || !j.contains("seed") ||
      !j["seed"].is_number_unsigned() || !j.contains("result") || !j["result"].is_object())
    throw SweepError(where +
                     ": not a sweep result line (expected {\"point\": {...}, \"seed\": N, "
                     "\"result\": {...}})");
  return ResultLine{j["point"], j["seed"].get<std::uint64_t>(), j["result"]};
}

// One JSON document (what `pvlock run --json` prints) is not a results file: said so, not
// "line 1: not JSON" (and never repaired as if its last line were cut short).
void reject_json_document(const std::string& text, const std::string& path) {
  const auto doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return;
  const char* kind = doc.contains("vms")           ? " (a `pvlock run --json` result)"
                     : doc.contains("experiments") ? " (a `pvlock reproduce --json` result)"
                                                   : "";
  throw SweepError(path + ": one JSON object" + kind +
                   ", not a sweep results file (JSON lines, one {\"point\", \"seed\", "
                   "\"result\"} per line, as `pvlock sweep --out` writes)");
}

}  // namespace

std::vector<ResultLine> read_results(const std::string& path, bool missing_ok, bool repair) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (missing_ok) return {};
    throw SweepError(path + ": no such file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SweepError(path + ": cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  std::vector<ResultLine> out;
  std::size_t pos = 0, line = 0, good_bytes = 0;
  while (pos < text.size()) {
    ++line;
    const auto nl = text.find('\n', pos);
    const std::string where = path + ":" + std::to_string(line);
    if (nl == std::string::npos) {  // a last line cut short
      if (out.empty()) reject_json_document(text, path);
      if (!repair)
        throw SweepError(where +
                         ": incomplete last line (an interrupted run?); resume the "
                         "sweep to repair it");
      std::filesystem::resize_file(path, good_bytes, ec);
      if (ec)
        throw SweepError(path + ": cannot truncate the incomplete last line: " + ec.message());
      break;
    }
    const std::string s = text.substr(pos, nl - pos);
    if (!s.empty()) {
      try {
        out.push_back(parse_line(s, where));
      } catch (const SweepError&) {
        if (out.empty()) reject_json_document(text, path);
        throw;
      }
    }
    pos = nl + 1;
    good_bytes = pos;
  }
  return out;
}

namespace {

// Orders point values: numbers numerically, before strings; strings lexicographically.
int compare_values(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  if (a.is_number() != b.is_number()) return a.is_number() ? -1 : 1;
  const std::string x = a.dump(), y = b.dump();
  return x < y ? -1 : (y < x ? 1 : 0);
}

bool line_less(const ResultLine& a, const ResultLine& b) {
  auto ia = a.point.begin();
  auto ib = b.point.begin();
  for (; ia != a.point.end() && ib != b.point.end(); ++ia, ++ib) {
    if (ia.key() != ib.key()) return ia.key() < ib.key();
    if (const int c = compare_values(ia.value(), ib.value())) return c < 0;
  }
  if ((ia == a.point.end()) != (ib == b.point.end())) return ia == a.point.end();
  return a.seed < b.seed;
}

}  // namespace

std::size_t merge_results(const std::vector<std::string>& inputs, const std::string& out) {
  std::vector<ResultLine> all;
  std::map<std::string, std::pair<std::string, nlohmann::ordered_json>>
      seen;  // key -> (file, result)
  for (const std::string& in : inputs) {
    for (ResultLine& l : read_results(in, false, false)) {
      const std::string key = point_key(l.point, l.seed);
      const auto it = seen.find(key);
      if (it != seen.end()) {
        if (comparable(it->second.second) != comparable(l.result))
          throw SweepError(in + ": point " + key + " differs from the one in " + it->second.first +
                           " (outside \"perf\")");
        continue;
      }
      seen.emplace(key, std::pair{in, l.result});
      all.push_back(std::move(l));
    }
  }
  std::stable_sort(all.begin(), all.end(), line_less);
  const std::string tmp = out + ".tmp";
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o) throw SweepError(out + ": cannot write");
    for (const ResultLine& l : all) o << format_line(l) << '\n';
    if (!o.flush()) throw SweepError(out + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (ec) throw SweepError(out + ": cannot write: " + ec.message());
  return all.size();
}

}  // namespace pvlock::sweep
