// SPDX-License-Identifier: GPL-2.0-only
// The "current simulation" of this thread. Several simulations may run at once in parallel
// threads (sweeps); each thread runs one at a time, so this state is thread_local.
#pragma once

namespace pvlock::sim {

class Simulation;
class Guest;
struct Task;

struct Context {
  Simulation* sim = nullptr;
  Task* task = nullptr;  // the task whose fiber is running, or nullptr in the event loop
  // Outside any task: the guest whose kernel objects are being built (a workload creating
  // its locks at set-up), so that a lock choosing its algorithm from the kernel's policies
  // at construction (RawSpinlock) finds that kernel.
  Guest* setup = nullptr;
};

inline thread_local Context tl_ctx;

// Marks the set-up of `g`'s objects for its lifetime.
class GuestSetUp {
 public:
  explicit GuestSetUp(Guest& g) : saved_(tl_ctx.setup) { tl_ctx.setup = &g; }
  ~GuestSetUp() { tl_ctx.setup = saved_; }
  GuestSetUp(const GuestSetUp&) = delete;
  GuestSetUp& operator=(const GuestSetUp&) = delete;

 private:
  Guest* saved_;
};

}  // namespace pvlock::sim
