// SPDX-License-Identifier: GPL-2.0-only
// What the liveness diagnostic knows about one lock a workload uses: its name, who holds it
// and who released it last (kept by the workload around lock()/unlock(), so the lock code
// itself stays environment-agnostic), and a way to print its word.
#pragma once

#include <string>

namespace pvlock::sim {

struct Task;

struct LockWatch {
  std::string name;                                     // e.g. "pvqspinlock of lockloop (vm0)"
  const void* lock = nullptr;                           // the lock object, for `describe`
  std::string (*describe)(const void* lock) = nullptr;  // its word, decoded; may be null
  const Task* holder = nullptr;                         // between acquisition and release
  const Task* last_locker = nullptr;
  const Task* last_unlocker = nullptr;
};

}  // namespace pvlock::sim
