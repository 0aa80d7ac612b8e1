// SPDX-License-Identifier: GPL-2.0-only
// NativeEnv's CPU ids: a thread beyond the 1024 per-CPU slots is an error that says so,
// never a cpu() of -1 that indexes before the per-CPU arrays.
#include <gtest/gtest.h>

#include <thread>

#include "pvlock/env/native.hpp"

namespace pvlock {
namespace {

TEST(NativeCpuIds, ThreadBeyondTheLimitIsAnError) {
  // In the death test's child: every id taken, then one more thread asks for a CPU.
  EXPECT_EXIT(
      {
        auto& ids = native::CpuIds::instance();
        while (ids.acquire() >= 0) {
        }
        std::thread t([] { (void)NativeEnv::cpu(); });
        t.join();
        std::exit(0);  // not reached
      },
      testing::KilledBySignal(SIGABRT), "more than 1024 threads use pvlock's locks at once");
}

TEST(NativeCpuIds, IdsAreReusedAfterThreadsExit) {
  // Far more threads over time than slots: each exit gives its id back.
  for (int i = 0; i < 2 * native::kMaxCpus; ++i) {
    int id = -2;
    std::thread t([&id] { id = NativeEnv::cpu(); });
    t.join();
    ASSERT_GE(id, 0);
    ASSERT_LT(id, native::kMaxCpus);
  }
}

}  // namespace
}  // namespace pvlock
