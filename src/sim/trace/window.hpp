// SPDX-License-Identifier: GPL-2.0-only
// The simulated-time window a trace keeps: `--trace-window START:END` in seconds.
#pragma once

#include <string>

#include "sim/engine/time.hpp"

namespace pvlock::sim::trace {

struct Window {
  Time start = 0;
  Time end = kNever;
  bool contains(Time t) const { return t >= start && t < end; }
};

// Parses "START:END" (seconds of simulated time, START < END, both >= 0, e.g. "0.1:0.12").
// Throws std::invalid_argument with a message naming the expected format.
Window parse_window(const std::string& text);

}  // namespace pvlock::sim::trace
