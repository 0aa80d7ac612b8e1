// SPDX-License-Identifier: GPL-2.0-only
// The kernel:* locks on real threads: listed with their kernel version, and they exclude.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"

namespace pvlock {
namespace {

TEST(KernelLocks, AreListedWithTheirKernelVersion) {
  for (const char* name : {"kernel:qspinlock", "kernel:pvqspinlock", "kernel:osq"}) {
    bool found = false;
    for (const LockInfo& info : lock_infos<NativeEnv>()) {
      if (info.name != name) continue;
      found = true;
      EXPECT_EQ(info.kernel_version, PVLOCK_KERNEL_VERSION) << name;
      EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(info.kernel_version.front()))) << name;
      EXPECT_EQ(info.kind, LockKind::spin) << name;
    }
    EXPECT_TRUE(found) << name;
  }
}

// Threads increment a plain counter under the lock for a while; with exclusion the counter
// equals the number of critical sections run (whatever the machine's load lets them run).
template <class L>
void expect_exclusion(L& lock, int threads, const char* name) {
  long counter = 0;
  std::atomic<long> sections{0};
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      NativeEnv::bind_cpu(t);
      long mine = 0;
      while (std::chrono::steady_clock::now() < until) {
        for (int i = 0; i < 100; ++i) {
          lock.lock();
          const long v = counter;
          counter = v + 1;
          lock.unlock();
        }
        mine += 100;
      }
      sections.fetch_add(mine);
      NativeEnv::unbind_cpu();
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(counter, sections.load()) << name;
  EXPECT_GT(counter, 0) << name;
}

TEST(KernelLocks, ExcludeOnRealThreads) {
  for (const char* name : {"kernel:qspinlock", "kernel:pvqspinlock", "kernel:osq"}) {
    const bool found = with_lock<NativeEnv>(name, [&]<class L>(const LockInfo&) {
      L lock;
      expect_exclusion(lock, 3, name);
    });
    EXPECT_TRUE(found) << name;
  }
}

}  // namespace
}  // namespace pvlock
