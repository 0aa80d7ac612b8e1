// SPDX-License-Identifier: GPL-2.0-only
#include "twin/background.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace pvlock::twin {
namespace {

int procs_running() {
  std::ifstream in("/proc/stat");
  std::string key;
  long long v = 0;
  while (in >> key) {
    if (key == "procs_running" && (in >> v)) return static_cast<int>(v);
    std::getline(in, key);  // rest of the line
  }
  return -1;
}

}  // namespace

double background_runnable(double window_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(window_s);
  double sum = 0;
  int n = 0;
  do {
    const int r = procs_running();
    if (r < 0) return 0;
    sum += r - 1;  // this thread is running while it reads
    ++n;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < end);
  return std::max(0.0, sum / n);
}

}  // namespace pvlock::twin
