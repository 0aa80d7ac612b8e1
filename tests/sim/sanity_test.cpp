// SPDX-License-Identifier: GPL-2.0-only
// Scores against arithmetic: an uncontended task and a saturated queued lock.
#include <gtest/gtest.h>

#include "harness/run.hpp"
#include "sim_helpers.hpp"

namespace pvlock::sim {
namespace {

using testing::bare_metal;
using testing::constant;
using testing::set_param;

double score(const nlohmann::ordered_json& j) { return j["vms"][0]["score"].get<double>(); }

TEST(Sanity, UncontendedTaskScoresOneOverItsLoop) {
  scenario::Scenario sc = bare_metal(1, 1, "mcs", "lockloop", 5, 0.5);
  set_param(sc, "compute_ns", constant(2000));
  set_param(sc, "hold_ns", constant(500));
  const scenario::Costs& c = sc.costs;
  // Fast path on lines the CPU owns: xchg + cmpxchg, a few plain stores and loads.
  const double fast = 2 * c.atomic_local_ns + 8 * c.l1_hit_ns;
  const double expected = 1e9 / (2000 + 500 + fast);
  EXPECT_NEAR(score(harness::run_to_json(sc)), expected, 0.02 * expected);
}

TEST(Sanity, SaturatedMcsHandsOffAtAboutOneTransfer) {
  scenario::Scenario sc = bare_metal(1, 8, "mcs", "lockloop", 5, 0.5);
  set_param(sc, "compute_ns", constant(0));
  set_param(sc, "hold_ns", constant(2000));
  const double expected = 1e9 / (2000 + sc.costs.xfer_socket_ns);
  EXPECT_NEAR(score(harness::run_to_json(sc)), expected, 0.10 * expected);
}

TEST(Sanity, TestAndSetCollapsesUnderContention) {
  // Seed 002's mechanism on bare metal: every TAS release is a stampede on one line.
  scenario::Scenario sc = bare_metal(2, 16, "tas", "lockloop", 2, 0.5);
  set_param(sc, "compute_ns", constant(470));
  set_param(sc, "hold_ns", constant(150));
  const double tas = score(harness::run_to_json(sc));
  sc.vms[0].guest.lock_name = "mcs";
  const double mcs = score(harness::run_to_json(sc));
  EXPECT_GT(mcs, 2 * tas);
}

TEST(Sanity, ATestAndSetReleaseIsRetriedOnlyByTheSpinnersWhoseReadBeatTheWinner) {
  // Seed 002's cell on bare metal: 64 CPUs on two sockets, lock2's costs. A spinner acts on
  // the value its re-read returns when it completes, and the winner's cmpxchg lands when
  // its line arrives: only the spinners whose re-read completed before that retry (those
  // near the releaser). If every spinner saw the release (values sampled at issue), each
  // hand-off would serialise ~63 cmpxchg transfers, ~4 us.
  scenario::Scenario sc = bare_metal(2, 32, "tas", "lockloop", 4, 1);
  set_param(sc, "compute_ns", constant(470));
  set_param(sc, "hold_ns", constant(150));
  const double per_op_ns = 1e9 / score(harness::run_to_json(sc));
  const double handoff = per_op_ns - 150;
  EXPECT_LT(handoff, 16 * sc.costs.xfer_remote_ns);
  EXPECT_GT(handoff, 2 * sc.costs.xfer_socket_ns);
}

}  // namespace
}  // namespace pvlock::sim
