// SPDX-License-Identifier: GPL-2.0-only
// Which simulated lock stands for each native lock in `pvlock twin`. pvlock's own locks are
// the same code in both worlds; a peer has a twin only where a pvlock lock runs the same
// algorithm (std::mutex is glibc's futex mutex: no owner spinning, no hand-off).
#pragma once

#include <string>
#include <vector>

namespace pvlock::twin {

struct TwinLock {
  std::string native;              // the name `pvlock bench` knows
  std::string sim;                 // the simulated lock (registry.hpp)
  std::vector<std::string> knobs;  // knob=value for the simulated guest
  std::string why;                 // what makes it the same algorithm
};

// Every native lock with a simulated twin, in `pvlock bench` order (peers only if built).
std::vector<TwinLock> twin_locks();
// The twin of `native`; throws std::invalid_argument naming the valid ones.
TwinLock find_twin(const std::string& native);
std::string twin_lock_names();  // comma-separated
// The default lock set of `pvlock twin`.
std::vector<std::string> default_twin_locks();

}  // namespace pvlock::twin
