// SPDX-License-Identifier: GPL-2.0-only
// The simulator's invariants are on in every build: this test binary is built like the
// release one (NDEBUG defined), and a violated PVLOCK_INVARIANT still stops the process with
// its message. If someone made the macro depend on NDEBUG, this fails.
#include "sim/invariant.hpp"

#include <gtest/gtest.h>

namespace pvlock::sim {
namespace {

int checked(int x) {
  PVLOCK_INVARIANT(x > 0, "x is positive");
  return x;
}

TEST(InvariantDeathTest, FiresInEveryBuild) {
#ifdef NDEBUG
  SUCCEED() << "built with NDEBUG: the invariant must fire regardless";
#endif
  EXPECT_EQ(checked(3), 3);
  EXPECT_DEATH(checked(-1), "simulator invariant violated: x is positive \\(x > 0\\)");
}

}  // namespace
}  // namespace pvlock::sim
