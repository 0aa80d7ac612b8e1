// SPDX-License-Identifier: GPL-2.0-only
#include "sweep/summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sweep/vary.hpp"

namespace pvlock::sweep {

double t975(std::size_t df) {
  static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return 0;
  if (df <= 30) return kTable[df - 1];
  if (df <= 40) return 2.021;
  if (df <= 60) return 2.000;
  if (df <= 120) return 1.980;
  return 1.960;
}

std::vector<SummaryRow> summarize(const std::vector<ResultLine>& lines) {
  struct Acc {
    SummaryRow row;
    std::vector<double> scores;
  };
  std::vector<Acc> accs;
  std::map<std::string, std::size_t> index;  // point dump + vm -> accs index
  for (std::size_t li = 0; li < lines.size(); ++li) {
    const ResultLine& l = lines[li];
    const auto& vms = l.result.contains("vms") ? l.result["vms"] : nlohmann::ordered_json();
    if (!vms.is_array()) throw SweepError(fmt::format("result {} has no \"vms\" array", li + 1));
    for (const auto& vm : vms) {
      if (!vm.is_object() || !vm.contains("name") || !vm["name"].is_string() ||
          !vm.contains("score") || !vm["score"].is_number())
        throw SweepError(fmt::format("result {}: a VM entry without name and score", li + 1));
      const std::string name = vm["name"].get<std::string>();
      const std::string key = l.point.dump() + "\n" + name;
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, accs.size()).first;
        Acc a;
        a.row.point = l.point;
        a.row.vm = name;
        a.row.unit =
            vm.contains("unit") && vm["unit"].is_string() ? vm["unit"].get<std::string>() : "";
        accs.push_back(std::move(a));
      }
      accs[it->second].scores.push_back(vm["score"].get<double>());
    }
  }
  std::vector<SummaryRow> out;
  for (Acc& a : accs) {
    SummaryRow r = a.row;
    r.n = a.scores.size();
    double sum = 0;
    for (double x : a.scores) sum += x;
    r.mean = sum / static_cast<double>(r.n);
    double ss = 0;
    for (double x : a.scores) ss += (x - r.mean) * (x - r.mean);
    r.stddev = r.n > 1 ? std::sqrt(ss / static_cast<double>(r.n - 1)) : 0;
    const double half =
        r.n > 1 ? t975(r.n - 1) * r.stddev / std::sqrt(static_cast<double>(r.n)) : 0;
    r.ci_low = r.mean - half;
    r.ci_high = r.mean + half;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// The point keys in order of first appearance.
std::vector<std::string> point_keys(const std::vector<SummaryRow>& rows) {
  std::vector<std::string> keys;
  for (const SummaryRow& r : rows)
    for (const auto& [k, v] : r.point.items())
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  return keys;
}

std::string value_text(const nlohmann::ordered_json& point, const std::string& key) {
  if (!point.contains(key)) return "";
  const auto& v = point[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string format_table(const std::vector<SummaryRow>& rows) {
  const auto keys = point_keys(rows);
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header = keys;
  for (const char* h : {"vm", "n", "mean", "stddev", "95% interval", "unit"}) header.push_back(h);
  cells.push_back(header);
  bool below_zero_rows = false;
  for (const SummaryRow& r : rows) {
    std::vector<std::string> c;
    for (const std::string& k : keys) c.push_back(value_text(r.point, k));
    c.push_back(r.vm);
    c.push_back(std::to_string(r.n));
    c.push_back(fmt::format("{:.6g}", r.mean));
    c.push_back(fmt::format("{:.4g}", r.stddev));
    // A score is never negative; a t interval that reaches below 0 says the seeds are too
    // few or too spread to bound it from below, which the footnote says.
    const bool below_zero = r.ci_low < 0 && r.mean >= 0;
    below_zero_rows = below_zero_rows || below_zero;
    c.push_back(fmt::format("[{:.6g}, {:.6g}]{}", r.ci_low, r.ci_high, below_zero ? "*" : ""));
    c.push_back(r.unit);
    cells.push_back(std::move(c));
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : cells)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool numeric = i >= keys.size() + 1 && i + 1 < row.size();  // right-align numbers
      line += numeric ? fmt::format("{:>{}}", row[i], width[i])
                      : fmt::format("{:<{}}", row[i], width[i]);
      if (i + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (below_zero_rows)
    out +=
        "* the 95% interval reaches below 0, which a score cannot: too few seeds or too much "
        "spread between them to bound the mean from below (run more --seeds)\n";
  return out;
}

std::string format_csv(const std::vector<SummaryRow>& rows) {
  const auto keys = point_keys(rows);
  std::string out;
  for (const std::string& k : keys) out += csv_field(k) + ",";
  out += "vm,unit,n,mean,stddev,ci95_low,ci95_high\n";
  for (const SummaryRow& r : rows) {
    for (const std::string& k : keys) out += csv_field(value_text(r.point, k)) + ",";
    out += fmt::format("{},{},{},{},{},{},{}\n", csv_field(r.vm), csv_field(r.unit), r.n, r.mean,
                       r.stddev, r.ci_low, r.ci_high);
  }
  return out;
}

}  // namespace pvlock::sweep
