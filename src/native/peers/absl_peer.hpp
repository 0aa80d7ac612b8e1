// SPDX-License-Identifier: GPL-2.0-only
// abseil's absl::Mutex (spin briefly, then queue and sleep) as a peer for `pvlock bench`.
// Optional: the build defines PVLOCK_HAVE_ABSL=1 only when libabsl-dev was found and linked.
#pragma once

#if defined(PVLOCK_HAVE_ABSL) && PVLOCK_HAVE_ABSL
#include <absl/synchronization/mutex.h>

namespace pvlock::native::peers {

class AbslMutex {
 public:
  void lock() { m_.Lock(); }
  bool try_lock() { return m_.TryLock(); }
  void unlock() { m_.Unlock(); }

 private:
  absl::Mutex m_;
};

}  // namespace pvlock::native::peers
#endif
