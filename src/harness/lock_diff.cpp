// SPDX-License-Identifier: GPL-2.0-only
#include "harness/lock_diff.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

#ifdef PVLOCK_KERNEL_LOCKS
#include "pvlock/kernel/abi.h"
#endif

namespace pvlock::harness {

double SeedSpread::min() const {
  return values.empty() ? 0 : *std::min_element(values.begin(), values.end());
}
double SeedSpread::max() const {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}
double SeedSpread::mean() const {
  return values.empty() ? 0
                        : std::accumulate(values.begin(), values.end(), 0.0) /
                              static_cast<double>(values.size());
}

const char* verdict_name(DiffVerdict v) {
  switch (v) {
    case DiffVerdict::agree:
      return "agree";
    case DiffVerdict::differ:
      return "differ";
    case DiffVerdict::not_counted:
      return "not counted";
  }
  return "?";
}

const std::vector<std::string>& diff_counters() {
  static const std::vector<std::string> names = {
      "lock_pending",      "lock_slowpath",    "lock_use_node2",       "lock_use_node3",
      "lock_use_node4",    "pv_wait_node",     "pv_wait_head",         "pv_wait_early",
      "pv_kick_unlock",    "pv_lock_stealing", "pv_hash_hops",         "osq_lock",
      "osq_lock_acquired", "osq_unqueue",      "osq_unqueue_preempted"};
  return names;
}

bool lock_counts(const std::string& lock, const std::string& event) {
  if (lock.rfind("kernel:", 0) != 0) return true;
#ifdef PVLOCK_KERNEL_LOCKS
  for (int k = 0; k < pvk_lock_event_count(); ++k)
    if (event == pvk_lock_event_name(k)) return true;
#endif
  return false;
}

namespace {

// Score (mean over the VMs) and counters (summed over the VMs) of one run.
std::vector<double> measure(const scenario::Scenario& sc) {
  const nlohmann::ordered_json j = run_to_json(sc);
  double score = 0;
  for (const auto& v : j["vms"]) score += v["score"].get<double>();
  std::vector<double> out{j["vms"].empty() ? 0 : score / static_cast<double>(j["vms"].size())};
  for (const std::string& c : diff_counters())
    out.push_back(j["counters"].contains(c) ? j["counters"][c].get<double>() : 0);
  return out;
}

}  // namespace

LockDiff diff_locks(const std::string& lock_a, const std::string& lock_b,
                    const std::string& scenario_path, const std::vector<std::string>& sets,
                    int seeds) {
  if (seeds < 1) throw std::invalid_argument("--seeds must be at least 1");
  const scenario::Scenario base = scenario::load_scenario_file(scenario_path, sets);
  LockDiff d;
  d.scenario = scenario_path;
  d.lock_a = lock_a;
  d.lock_b = lock_b;
  for (int k = 0; k < seeds; ++k) d.seeds.push_back(base.run.seed + static_cast<std::uint64_t>(k));
  // Every [[vm]] entry on the lock, through the scenario's own parser (it checks the name).
  auto with_lock = [&](const std::string& lock) {
    std::vector<std::string> s = sets;
    for (std::size_t i = 0; i < base.vms.size(); ++i)
      s.push_back(fmt::format("vm[{}].guest.lock={}", i, lock));
    return scenario::load_scenario_file(scenario_path, s);
  };
  const scenario::Scenario sa = with_lock(lock_a);
  const scenario::Scenario sb = with_lock(lock_b);
  d.rows.push_back({"score", {}, {}, DiffVerdict::agree});
  for (const std::string& c : diff_counters()) d.rows.push_back({c, {}, {}, DiffVerdict::agree});
  for (const auto& [sc0, side] : {std::pair{&sa, 0}, std::pair{&sb, 1}}) {
    for (const std::uint64_t seed : d.seeds) {
      scenario::Scenario sc = *sc0;
      sc.run.seed = seed;
      const std::vector<double> m = measure(sc);
      for (std::size_t r = 0; r < d.rows.size(); ++r)
        (side == 0 ? d.rows[r].a : d.rows[r].b).values.push_back(m[r]);
    }
  }
  for (DiffRow& r : d.rows) {
    if (r.name != "score" && (!lock_counts(lock_a, r.name) || !lock_counts(lock_b, r.name))) {
      r.verdict = DiffVerdict::not_counted;
      continue;
    }
    r.verdict = r.a.contains(r.b.mean()) && r.b.contains(r.a.mean()) ? DiffVerdict::agree
                                                                     : DiffVerdict::differ;
  }
  return d;
}

nlohmann::ordered_json diff_to_json(const LockDiff& d) {
  nlohmann::ordered_json j;
  j["scenario"] = d.scenario;
  j["locks"] = {d.lock_a, d.lock_b};
  j["seeds"] = d.seeds;
  j["rule"] = "agree: each lock's mean lies within the other's min..max over the seeds";
  auto spread = [](const SeedSpread& s) {
    nlohmann::ordered_json o;
    o["values"] = s.values;
    o["min"] = s.min();
    o["mean"] = s.mean();
    o["max"] = s.max();
    return o;
  };
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  int agree = 0, differ = 0;
  for (const DiffRow& r : d.rows) {
    nlohmann::ordered_json o;
    o["name"] = r.name;
    o["a"] = spread(r.a);
    o["b"] = spread(r.b);
    o["verdict"] = verdict_name(r.verdict);
    agree += r.verdict == DiffVerdict::agree;
    differ += r.verdict == DiffVerdict::differ;
    rows.push_back(o);
  }
  j["rows"] = rows;
  j["agree"] = agree;
  j["differ"] = differ;
  return j;
}

std::string diff_to_text(const LockDiff& d) {
  std::string seeds;
  for (const std::uint64_t s : d.seeds) seeds += fmt::format("{}{}", seeds.empty() ? "" : ",", s);
  std::string t = fmt::format("{}: {} vs {}, every VM on the lock, seeds {}\n", d.scenario,
                              d.lock_a, d.lock_b, seeds);
  t += "agree: each lock's mean lies within the other's min..max over the seeds\n\n";
  t += fmt::format("{:<22} {:>38}   {:>38}   {}\n", "", d.lock_a + " min / mean / max",
                   d.lock_b + " min / mean / max", "verdict");
  int agree = 0, differ = 0;
  for (const DiffRow& r : d.rows) {
    auto cell = [](const SeedSpread& s) {
      return fmt::format("{:.6g} / {:.6g} / {:.6g}", s.min(), s.mean(), s.max());
    };
    t += fmt::format("{:<22} {:>38}   {:>38}   {}\n", r.name, cell(r.a), cell(r.b),
                     verdict_name(r.verdict));
    agree += r.verdict == DiffVerdict::agree;
    differ += r.verdict == DiffVerdict::differ;
  }
  t += fmt::format("\n{} agree, {} differ\n", agree, differ);
  return t;
}

}  // namespace pvlock::harness
