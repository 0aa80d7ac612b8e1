// SPDX-License-Identifier: GPL-2.0-only
// A deliberately broken lock: locktorture's lock_busted. It provides no exclusion at all,
// so a torture run over it must report violations; a harness that passes it is broken.
#pragma once

#include "pvlock/env/environment.hpp"

namespace pvlock {

template <Environment Env>
class BustedLock {
 public:
  static constexpr const char* kName = "busted";
  void lock() {}
  bool try_lock() { return true; }
  void unlock() {}
};

}  // namespace pvlock
