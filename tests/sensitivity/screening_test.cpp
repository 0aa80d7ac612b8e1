// SPDX-License-Identifier: GPL-2.0-only
#include "sensitivity/screening.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace pvlock::sensitivity {
namespace {

const std::string kSeed004 = std::string(PVLOCK_SOURCE_DIR) + "/experiments/seed004";

Options options(const std::string& params) {
  Options o;
  o.experiment = kSeed004;
  o.params = params;
  o.trajectories = 3;
  o.seeds = 2;
  return o;
}

TEST(Plan, PointsAreRowsTimesTheEffectsCells) {
  const Plan p = make_plan(options("costs.vcpu_switch_ns,fio.hold_ns"));
  ASSERT_EQ(p.params.size(), 2u);
  EXPECT_EQ(p.design.rows.size(), 9u);
  EXPECT_EQ(p.cells.size(), 2u);  // the effect's two cells, not the profile cells
  ASSERT_EQ(p.points.size(), 18u);
  const auto& sets = p.points[1].sets;
  EXPECT_NE(std::find(sets.begin(), sets.end(), "run.seed=1"), sets.end());
  bool hold = false;
  for (const std::string& s : sets) hold = hold || s.rfind("vm[0].workload.hold_ns=", 0) == 0;
  EXPECT_TRUE(hold);
}

TEST(Plan, EstimatesLeaveOutTheTreatmentAndOtherWorkloads) {
  const Plan p = make_plan(options("estimates"));
  for (const model::Constant* c : p.params) {
    EXPECT_EQ(c->provenance, model::Provenance::estimate);
    EXPECT_TRUE(c->workload.empty() || c->workload == "fio") << c->id;
    EXPECT_NE(c->id, "guest.vcpu_is_preempted_ns");
  }
  ASSERT_EQ(p.excluded.size(), 1u);
  EXPECT_EQ(p.excluded[0].first, "guest.vcpu_is_preempted_ns");
}

TEST(Plan, BadParamsAreErrors) {
  EXPECT_THROW(make_plan(options("no.such")), SensitivityError);
  EXPECT_THROW(make_plan(options("costs.atomic_local_ns")), SensitivityError);  // no range
  EXPECT_THROW(make_plan(options("ebizzy.user_ns")), SensitivityError);         // not used
  EXPECT_THROW(make_plan(options("guest.vcpu_is_preempted_ns")), SensitivityError);
  Options o = options("fio.hold_ns");
  o.trajectories = 0;
  EXPECT_THROW(make_plan(o), SensitivityError);
  o = options("fio.hold_ns");
  o.experiment = "/nonexistent";
  EXPECT_THROW(make_plan(o), SensitivityError);
}

// A fake model: the numerator cell is 1 + 0.5 u(fio.hold_ns), the denominator 1, every seed
// the same: the ratio's elementary effect of fio.hold_ns is 0.5 everywhere, the other's 0.
TEST(Analyse, MuStarIsTheSlopeOfALinearModel) {
  const Plan p = make_plan(options("costs.vcpu_switch_ns,fio.hold_ns"));
  const model::Constant& hold = *model::find_constant("fio.hold_ns");
  std::vector<sweep::ResultLine> lines;
  for (const sweep::PointSpec& pt : p.points)
    for (std::uint64_t s = 1; s <= 2; ++s) {
      const double x = pt.point["x"]["fio.hold_ns"].get<double>();
      const double u = (x - hold.range->low) / (hold.range->high - hold.range->low);
      const bool num = pt.point["cell"] == "plain call";
      lines.push_back({pt.point, s, {{"value", num ? 1 + 0.5 * u : 1.0}}});
    }
  const auto j = analyse(p, lines);
  ASSERT_EQ(j["effects"].size(), 1u);
  const auto& e = j["effects"][0];
  EXPECT_EQ(e["ranking"][0]["id"], "fio.hold_ns");
  EXPECT_NEAR(e["ranking"][0]["mu_star"].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(e["ranking"][0]["sigma"].get<double>(), 0, 1e-6);
  EXPECT_NEAR(e["ranking"][1]["mu_star"].get<double>(), 0, 1e-12);
  EXPECT_NEAR(e["noise"]["ratio_se"].get<double>(), 0, 1e-12);
  EXPECT_NEAR(e["range"]["high"].get<double>(), 1.5, 1e-9);
  EXPECT_EQ(e["ratios"].size(), p.design.rows.size());
  // Band [1.002, 1.03]: only rows with the hold near its low end land in it.
  for (const auto& r : e["reached_rows"]) {
    EXPECT_GE(r["ratio"].get<double>(), 1.002);
    EXPECT_LE(r["ratio"].get<double>(), 1.03);
  }
  // One effect: the rows in every band are the rows in its band.
  EXPECT_EQ(j["all_effects_reached_rows"].size(), e["reached_rows"].size());
  lines.pop_back();
  EXPECT_THROW(analyse(p, lines), SensitivityError);
}

}  // namespace
}  // namespace pvlock::sensitivity
