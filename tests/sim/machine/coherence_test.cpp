// SPDX-License-Identifier: GPL-2.0-only
// The cache-line cost model: hits, transfers by distance, invalidation, watchers.
#include "sim/machine/coherence.hpp"

#include <gtest/gtest.h>

namespace pvlock::sim {
namespace {

scenario::MachineSpec two_sockets() {
  scenario::MachineSpec m;
  m.sockets = 2;
  m.cores_per_socket = 2;
  m.threads_per_core = 2;  // cpus 0,1 siblings; 0-3 socket 0; 4-7 socket 1
  return m;
}

TEST(Topology, DistanceClasses) {
  Topology t(two_sockets());
  EXPECT_EQ(t.distance(0, 0), Distance::self);
  EXPECT_EQ(t.distance(0, 1), Distance::smt);
  EXPECT_EQ(t.distance(0, 2), Distance::socket);
  EXPECT_EQ(t.distance(0, 5), Distance::remote);
}

TEST(Coherence, LoadsHitAfterFirstTransfer) {
  Topology t(two_sockets());
  scenario::Costs c;
  Coherence coh(t, c);
  Line& l = coh.line(1000);
  EXPECT_DOUBLE_EQ(coh.write(l, 0, false), c.l1_hit_ns);  // first touch
  EXPECT_DOUBLE_EQ(coh.load(l, 1), c.xfer_smt_ns);
  EXPECT_DOUBLE_EQ(coh.load(l, 1), c.l1_hit_ns);
  EXPECT_DOUBLE_EQ(coh.load(l, 4), c.xfer_remote_ns);
  EXPECT_DOUBLE_EQ(coh.load(l, 2), c.xfer_socket_ns);
}

TEST(Coherence, WriteInvalidatesFarthestSharer) {
  Topology t(two_sockets());
  scenario::Costs c;
  Coherence coh(t, c);
  Line& l = coh.line(42);
  coh.write(l, 0, true);
  coh.load(l, 1);
  coh.load(l, 5);
  // CPU 1 upgrades its shared copy: CPU 5 (remote) must acknowledge.
  EXPECT_DOUBLE_EQ(coh.write(l, 1, true), c.atomic_local_ns + c.xfer_remote_ns);
  EXPECT_DOUBLE_EQ(coh.write(l, 1, true), c.atomic_local_ns);  // owned now
  EXPECT_DOUBLE_EQ(coh.load(l, 1), c.l1_hit_ns);
}

TEST(Coherence, WatchersSurviveTableGrowth) {
  Topology t(two_sockets());
  scenario::Costs c;
  Coherence coh(t, c);
  WatchNode a, b;
  int tag_a = 1, tag_b = 2;
  a.waiter = &tag_a;
  b.waiter = &tag_b;
  Coherence::watch(coh.line(7), a);
  Coherence::watch(coh.line(7), b);
  for (std::uint64_t k = 100; k < 20000; ++k) coh.line(k);  // forces several rehashes
  int woken = 0;
  Coherence::notify(coh.line(7), [&](void* w) { woken += *static_cast<int*>(w); });
  EXPECT_EQ(woken, 3);
  EXPECT_FALSE(a.linked());
  EXPECT_FALSE(b.linked());
  Coherence::unwatch(a);  // harmless when not linked
}

}  // namespace
}  // namespace pvlock::sim
