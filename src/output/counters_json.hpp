// SPDX-License-Identifier: GPL-2.0-only
// Lock event counters as JSON, with the kernel's names (lock_event_counts/<name>).
#pragma once

#include <nlohmann/json.hpp>

#include "pvlock/env/lock_events.hpp"

namespace pvlock::output {

inline nlohmann::ordered_json counters_json(const LockEventCounts& c) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < kLockEventCount; ++i) j[std::string(kLockEventNames[i])] = c.v[i];
  return j;
}

}  // namespace pvlock::output
