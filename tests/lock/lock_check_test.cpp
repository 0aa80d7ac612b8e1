// SPDX-License-Identifier: GPL-2.0-only
// The always-on lock invariants (lock/check.hpp) fire in the release build the suite runs
// in: a broken lock word or queue stops the process with its message, NDEBUG or not.
// (The PV hash's two checks are in pv_hash_test.cpp.)
#include <gtest/gtest.h>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/check.hpp"
#include "pvlock/lock/osq.hpp"

namespace pvlock {
namespace {

TEST(LockCheckDeathTest, FailurePrintsWhatAndWhere) {
  EXPECT_DEATH(PVLOCK_LOCK_CHECK(1 + 1 == 3, "arithmetic holds"),
               "lock invariant violated at .*lock_check_test.cpp:[0-9]+: arithmetic holds "
               "\\(1 \\+ 1 == 3\\)");
}

TEST(LockCheckDeathTest, OsqUnlockOfAnOsqNobodyHolds) {
  EXPECT_DEATH(
      {
        Osq<NativeEnv> q;
        q.unlock();
      },
      "osq_unlock\\(\\) of an OSQ nobody holds");
}

TEST(LockCheck, TheConditionIsEvaluatedOnce) {
  int evaluated = 0;
  PVLOCK_LOCK_CHECK(++evaluated == 1, "evaluated once");
  EXPECT_EQ(evaluated, 1);
}

}  // namespace
}  // namespace pvlock
