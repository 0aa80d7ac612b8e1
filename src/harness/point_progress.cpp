// SPDX-License-Identifier: GPL-2.0-only
#include "harness/point_progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace pvlock::harness {

namespace {

std::string hms(double s) {
  const long t = static_cast<long>(s + 0.5);
  return fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
}

}  // namespace

bool is_tty(std::FILE* f) { return f != nullptr && isatty(fileno(f)) != 0; }

PointProgress::PointProgress(std::FILE* out, std::size_t total, bool tty, std::string name)
    : out_(out),
      total_(total),
      tty_(tty),
      name_(std::move(name)),
      start_(std::chrono::steady_clock::now()) {}

void PointProgress::point_done(const std::string& description) {
  if (out_ == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta =
      done_ == 0 ? 0 : elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = total_ == 0 ? kWidth : static_cast<int>(kWidth * done_ / total_);
    fmt::print(out_, "\r[{}{}] {}/{}  elapsed {}  ETA {}   ", std::string(filled, '#'),
               std::string(kWidth - filled, '.'), done_, total_, hms(elapsed), hms(eta));
  } else {
    const std::size_t step = std::max<std::size_t>(1, total_ / 10);
    if (done_ % step != 0 && done_ != total_) return;
    fmt::print(out_, "{}: {}/{} done ({}), ETA {}\n", name_, done_, total_, description, hms(eta));
  }
  std::fflush(out_);
}

void PointProgress::finish() {
  if (out_ != nullptr && tty_) {
    fmt::print(out_, "\n");
    std::fflush(out_);
  }
}

}  // namespace pvlock::harness
