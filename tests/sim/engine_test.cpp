// The engine's building blocks: event order, the indexed resume heap, generators, fibers.
#include <gtest/gtest.h>

#include <vector>

#include "sim/engine/event_queue.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/resume_queue.hpp"
#include "sim/engine/rng.hpp"

namespace pvlock::sim {
namespace {

TEST(EventQueue, OrdersByTimeThenSequence) {
  EventQueue q;
  q.push(20, EventKind::timer, 1, 0);
  q.push(10, EventKind::timer, 2, 0);
  q.push(20, EventKind::timer, 3, 0);
  q.push(10, EventKind::timer, 4, 0);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().target);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{2, 4, 1, 3}));
}

TEST(ResumeQueue, MovesEntriesInsteadOfDuplicating) {
  ResumeQueue q;
  q.resize(4);
  q.set(0, 100, 1);
  q.set(1, 50, 2);
  q.set(2, 70, 3);
  q.set(0, 10, 4);   // moved earlier
  q.set(1, 200, 5);  // moved later
  q.erase(2);
  EXPECT_EQ(q.pop(), 0u);
  EXPECT_EQ(q.pop(), 1u);
  EXPECT_TRUE(q.empty());
}

TEST(Rng, DerivedStreamsAreReproducibleAndDistinct) {
  Rng a(derive_seed(7, 1, 3)), b(derive_seed(7, 1, 3)), c(derive_seed(7, 1, 4));
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
  Rng u(1);
  for (int i = 0; i < 1000; ++i) {
    const double x = u.uniform();
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
}

TEST(Fiber, YieldsAndResumes) {
  Fiber f;
  std::vector<int> trace;
  f.start([&] {
    trace.push_back(1);
    f.yield();
    trace.push_back(3);
  });
  f.resume();
  trace.push_back(2);
  f.resume();
  EXPECT_TRUE(f.done());
  EXPECT_EQ(trace, (std::vector<int>{1, 2, 3}));
}

}  // namespace
}  // namespace pvlock::sim
