// SPDX-License-Identifier: GPL-2.0-only
// The "current simulation" of this thread. Several simulations may run at once in parallel
// threads (sweeps); each thread runs one at a time, so this state is thread_local.
#pragma once

namespace pvlock::sim {

class Simulation;
struct Task;

struct Context {
  Simulation* sim = nullptr;
  Task* task = nullptr;  // the task whose fiber is running, or nullptr in the event loop
};

inline thread_local Context tl_ctx;

}  // namespace pvlock::sim
