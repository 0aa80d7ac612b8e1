// SPDX-License-Identifier: GPL-2.0-only
// Progress of many independent runs (reproduce, sweep, sensitivity): on a terminal one line
// rewritten in place, a bar with done/total, elapsed time and ETA; otherwise (logs, Slurm) a
// plain line each time another tenth of the runs is done (and at the last), so that a log of
// a long reproduce does not grow by a line per run. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace pvlock::harness {

class PointProgress {
 public:
  // `out` = nullptr: silent.
  // `name` starts every plain line ("sweep: 3/8 done ...").
  PointProgress(std::FILE* out, std::size_t total, bool tty, std::string name = "sweep");
  void point_done(const std::string& description);
  void finish();

 private:
  std::FILE* out_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool tty_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
};

// True if `f` is a terminal.
bool is_tty(std::FILE* f);

}  // namespace pvlock::harness
