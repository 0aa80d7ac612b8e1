// SPDX-License-Identifier: GPL-2.0-only
// Sweep progress on stderr: a bar with done/total and ETA on a terminal, plain lines
// otherwise (logs, Slurm). Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace pvlock::sweep {

class Progress {
 public:
  // `out` = nullptr: silent.
  // `name` starts every plain line ("sweep: 3/8 done ...").
  Progress(std::FILE* out, std::size_t total, bool tty, std::string name = "sweep");
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

}  // namespace pvlock::sweep
