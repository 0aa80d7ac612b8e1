// SPDX-License-Identifier: GPL-2.0-only
// The engine's building blocks: event order, the indexed resume heap, generators, fibers,
// rounding to whole nanoseconds.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/engine/event_queue.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/resume_queue.hpp"
#include "sim/engine/rng.hpp"
#include "sim/engine/time.hpp"

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

TEST(EventQueue, PopsInTimeThenSequenceOrderUnderRandomPushesAndPops) {
  EventQueue q;
  std::set<std::pair<Time, std::uint64_t>> ref;  // (time, seq) of the pending events
  std::uint64_t seq = 0;                         // mirrors the queue's own counter
  Rng rng(99);
  for (int step = 0; step < 200000; ++step) {
    if (rng.next() % 3 != 0 || ref.empty()) {
      const Time t = static_cast<Time>(rng.next() % 100);
      q.push(t, EventKind::timer, static_cast<std::uint32_t>(seq), 0);
      ref.insert({t, seq++});
    } else {
      const Event e = q.pop();
      ASSERT_EQ(std::make_pair(e.time, e.seq), *ref.begin()) << "step " << step;
      ASSERT_EQ(e.target, static_cast<std::uint32_t>(e.seq));
      ref.erase(ref.begin());
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

TEST(ResumeQueue, MovesEntriesInsteadOfDuplicating) {
  ResumeQueue q;
  q.resize(4);
  q.set(0, 100, 1, 0);
  q.set(1, 50, 2, 0);
  q.set(2, 70, 3, 0);
  q.set(0, 10, 4, 0);   // moved earlier
  q.set(1, 200, 5, 0);  // moved later
  q.erase(2);
  EXPECT_EQ(q.pop(), 0u);
  EXPECT_EQ(q.pop(), 1u);
  EXPECT_TRUE(q.empty());
  // Due now: in arrival order, after an older entry due now, moved and erased like the rest.
  q.set(3, 300, 6, 200);
  q.set(0, 200, 7, 200);
  q.set(1, 200, 8, 200);
  q.set(2, 200, 9, 200);
  q.set(0, 300, 10, 200);  // out of the FIFO, into the heap
  q.erase(1);
  q.set(1, 200, 11, 200);  // back in, behind 2
  EXPECT_EQ(q.pop(), 2u);
  EXPECT_EQ(q.pop(), 1u);
  EXPECT_EQ(q.pop(), 3u);
  EXPECT_EQ(q.pop(), 0u);
  EXPECT_TRUE(q.empty());
}

TEST(ResumeQueue, AgreesWithAnOrderedSetUnderRandomSetsErasesAndPops) {
  // Reference: the pending (time, seq, vCPU) triples in a std::set. Times collide often
  // so that ties are broken by the sequence number, as the simulator relies on; the current
  // time is the last popped entry's, and a third of the sets are due at it (the FIFO).
  constexpr std::uint32_t kVcpus = 37;
  ResumeQueue q;
  q.resize(kVcpus);
  std::set<std::tuple<Time, std::uint64_t, std::uint32_t>> ref;
  std::vector<std::optional<std::pair<Time, std::uint64_t>>> key(kVcpus);
  Rng rng(12345);
  std::uint64_t seq = 0;
  Time now = 0;
  int from_fifo = 0;
  for (int step = 0; step < 200000; ++step) {
    const auto v = static_cast<std::uint32_t>(rng.next() % kVcpus);
    const std::uint64_t op = rng.next() % 8;
    if (op < 5) {  // set or move
      if (key[v]) ref.erase({key[v]->first, key[v]->second, v});
      const Time t = rng.next() % 3 == 0 ? now : now + static_cast<Time>(rng.next() % 64);
      key[v] = {t, ++seq};
      ref.insert({t, seq, v});
      q.set(v, t, seq, now);
    } else if (op < 7) {  // erase (present or not)
      if (key[v]) ref.erase({key[v]->first, key[v]->second, v});
      key[v].reset();
      q.erase(v);
    } else if (!ref.empty()) {  // pop the earliest
      const auto [t, s, w] = *ref.begin();
      ASSERT_EQ(q.top_time(), t);
      ASSERT_EQ(q.top_seq(), s);
      ASSERT_EQ(q.pop(), w) << "step " << step;
      ref.erase(ref.begin());
      key[w].reset();
      if (t == now) ++from_fifo;
      now = t;  // the earliest entry: never before now
    }
    ASSERT_EQ(q.empty(), ref.empty());
    if (!ref.empty()) {
      ASSERT_EQ(q.top(), std::get<2>(*ref.begin())) << "step " << step;
    }
  }
  EXPECT_GT(from_fifo, 10000);  // entries due now: the FIFO, its erases and compaction
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

TEST(RoundNs, AgreesWithLlroundEverywhereInRange) {
  // Halves, the doubles next to them, the largest double below 0.5, the edges where the
  // spacing of doubles reaches 0.5 and 1, and both signs.
  std::vector<double> xs = {0.0,
                            -0.0,
                            0.5,
                            -0.5,
                            1.5,
                            -1.5,
                            2.5,
                            -2.5,
                            1e-300,
                            0.49999999999999994,
                            -0.49999999999999994,
                            4503599627370495.5,
                            -4503599627370495.5,
                            4503599627370496.0,
                            9007199254740993.0,
                            9.2e18,
                            -9.2e18};
  for (double h : {0.5, 1.5, 2.5, 1e6 + 0.5, 123456789.5})
    for (double x : {h, -h}) {
      xs.push_back(std::nextafter(x, 0.0));
      xs.push_back(std::nextafter(x, 2 * x));
    }
  // Random bit patterns of every magnitude below 2^62, the simulator's costs and times.
  Rng r(99);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::ldexp(r.uniform(), static_cast<int>(r.next() % 63)) *
                     ((r.next() & 1) != 0 ? -1.0 : 1.0);
    xs.push_back(x);
  }
  for (double x : xs) ASSERT_EQ(round_ns(x), std::llround(x)) << x;
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
