// SPDX-License-Identifier: GPL-2.0-only
#include "sim/trace/window.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace pvlock::sim::trace {

namespace {

double parse_seconds(const std::string& text, const std::string& whole) {
  const auto bad = [&] {
    return std::invalid_argument("--trace-window: '" + whole +
                                 "' is not START:END in seconds of simulated time (e.g. 0.1:0.12)");
  };
  if (text.empty()) throw bad();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) throw bad();
  if (v < 0) throw std::invalid_argument("--trace-window: times must be >= 0, got '" + whole + "'");
  return v;
}

}  // namespace

Window parse_window(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw std::invalid_argument("--trace-window: '" + text +
                                "' is not START:END in seconds of simulated time (e.g. 0.1:0.12)");
  const double a = parse_seconds(text.substr(0, colon), text);
  const double b = parse_seconds(text.substr(colon + 1), text);
  if (!(a < b))
    throw std::invalid_argument("--trace-window: START must be before END, got '" + text + "'");
  if (b > 1e9) throw std::invalid_argument("--trace-window: END is too large in '" + text + "'");
  Window w;
  w.start = static_cast<Time>(std::llround(a * 1e9));
  w.end = static_cast<Time>(std::llround(b * 1e9));
  return w;
}

}  // namespace pvlock::sim::trace
