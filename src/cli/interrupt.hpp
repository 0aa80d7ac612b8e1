// SPDX-License-Identifier: GPL-2.0-only
// Ctrl-C (SIGINT) during a long command: the first one is only recorded, so that the command
// stops where it can still leave valid output (a trace closed properly, partial totals and
// the verdict so far); a second one ends the process at once, as usual.
#pragma once

#include <atomic>

namespace pvlock::cli {

// Installs the handler; the flag is false until the first SIGINT.
void catch_interrupt();
const std::atomic<bool>& interrupt_flag();

}  // namespace pvlock::cli
