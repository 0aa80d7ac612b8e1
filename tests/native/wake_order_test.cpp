// SPDX-License-Identifier: GPL-2.0-only
// The native sleep/wake handshake's memory orders. The sleeper's store of `blocked` and
// load of its wake condition, and the waker's store of the condition and exchange of
// `blocked`, form the store-buffering pattern: C++ forbids the outcome in which both sides
// read the old value (the waker skips the futex wake, the sleeper sleeps for good) only if
// all four are seq_cst. x86 and arm64 never show the outcome and ThreadSanitizer does not
// model it, so no run can catch a weaker order: the test checks the orders themselves.
#include <gtest/gtest.h>

#include <atomic>

#include "pvlock/env/native.hpp"

namespace pvlock {
namespace {

TEST(NativeWakeOrder, BothSidesOfTheHandshakeAreSequentiallyConsistent) {
  EXPECT_EQ(NativeEnv::kPrepareBlockOrder, std::memory_order_seq_cst);
  EXPECT_EQ(NativeEnv::kWakeOrder, std::memory_order_seq_cst);
}

}  // namespace
}  // namespace pvlock
