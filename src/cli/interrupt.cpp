// SPDX-License-Identifier: GPL-2.0-only
#include "cli/interrupt.hpp"

#include <unistd.h>

#include <csignal>

namespace pvlock::cli {

namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

void on_sigint(int) {
  g_interrupted.store(true, std::memory_order_relaxed);
  // Only async-signal-safe calls here: restore the default action, say what happens.
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGINT, &dfl, nullptr);
  static constexpr char kMsg[] =
      "\npvlock: interrupted; stopping at the next point that leaves valid output (Ctrl-C "
      "again to quit at once)\n";
  const ssize_t n = write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  (void)n;
}

}  // namespace

void catch_interrupt() {
  struct sigaction sa = {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
}

const std::atomic<bool>& interrupt_flag() { return g_interrupted; }

}  // namespace pvlock::cli
