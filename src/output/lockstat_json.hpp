// SPDX-License-Identifier: GPL-2.0-only
// Lock statistics as JSON: one entry per lock instance, /proc/lock_stat's columns in ns.
#pragma once

#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "pvlock/stat/lock_stat.hpp"

namespace pvlock::output {

inline nlohmann::ordered_json lockstat_json(const LockStat& s) {
  auto avg = [](std::int64_t total, std::uint64_t n) {
    return n > 0 ? static_cast<double>(total) / static_cast<double>(n) : 0.0;
  };
  const std::uint64_t holds = s.acquisitions;
  constexpr std::int64_t kNone = LockStat::kNone;  // no sample yet
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["con_bounces"] = s.con_bounces;
  j["contentions"] = s.contentions;
  j["wait_min_ns"] = s.wait_min == kNone ? 0 : s.wait_min;
  j["wait_max_ns"] = s.wait_max;
  j["wait_total_ns"] = s.wait_total;
  j["wait_avg_ns"] = avg(s.wait_total, s.contentions);
  j["acq_bounces"] = s.acq_bounces;
  j["acquisitions"] = s.acquisitions;
  j["read_acquisitions"] = s.read_acquisitions;
  j["hold_min_ns"] = s.hold_min == kNone ? 0 : s.hold_min;
  j["hold_max_ns"] = s.hold_max;
  j["hold_total_ns"] = s.hold_total;
  j["hold_avg_ns"] = avg(s.hold_total, holds);
  return j;
}

// Every registered instance, in registration order (deterministic), each followed by its
// wait_lock's row if it has one.
inline nlohmann::ordered_json lockstat_json(const std::vector<LockStat*>& stats) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const LockStat* s : stats) {
    a.push_back(lockstat_json(*s));
    if (s->wait_lock) a.push_back(lockstat_json(*s->wait_lock));
  }
  return a;
}

}  // namespace pvlock::output
