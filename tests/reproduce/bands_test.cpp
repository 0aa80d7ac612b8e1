// SPDX-License-Identifier: GPL-2.0-only
// The verdict rules of pvlock reproduce on fixtures (experiments/README.md, "Tolerances"):
// every band is a test of the published effect -- a null result never agrees with a small
// published effect, any rise never agrees with a 6x one -- and the table prints what it tests.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "reproduce/reproduce.hpp"
#include "reproduce/uncertainty.hpp"

namespace pvlock::reproduce {
namespace {

struct Fixture {
  const char* what;
  double published;
  double simulated;
  std::optional<double> factor;
  bool agrees;
};

bool verdict(const Fixture& f) {
  Effect e;
  e.factor = f.factor;
  const Band b = tolerance_band(f.published, e);
  return b.low <= f.simulated && f.simulated <= b.high;
}

TEST(Bands, EveryBandTestsThePublishedEffect) {
  const std::vector<Fixture> fixtures = {
      // seed 001's "boost, 1 VM": +6.5 % published; a null effect is not it.
      {"null vs +6.5 %", 1.065, 1.001, {}, false},
      {"+2 % vs +6.5 % (under a third)", 1.065, 1.02, {}, false},
      {"+3 % vs +6.5 % (over a third)", 1.065, 1.03, {}, true},
      {"+21 % vs +6.5 % (size + 0.15)", 1.065, 1.21, {}, true},
      {"+22 % vs +6.5 % (too much)", 1.065, 1.22, {}, false},
      {"-2 % vs +6.5 % (wrong way)", 1.065, 0.98, {}, false},
      {"-10 % vs -10 %", 0.9, 0.9, {}, true},
      {"-2 % vs -10 % (under a third)", 0.9, 0.98, {}, false},
      {"-24 % vs -10 %", 0.9, 0.76, {}, true},
      {"no effect vs none", 1.0, 1.1, {}, true},
      {"+20 % vs none", 1.0, 1.2, {}, false},
      // Large ratios within x/÷ 1.3.
      {"2.3x vs 2x", 2.0, 2.3, {}, true},
      {"1.5x vs 2x", 2.0, 1.5, {}, false},
      // seed 003's mutex_spin_on_owner: 6.06x published, x/÷ 3.
      {"1.51x vs 6.06x", 6.065, 1.511, 3.0, false},
      {"2.1x vs 6.06x", 6.065, 2.1, 3.0, true},
      {"18x vs 6.06x", 6.065, 18.0, 3.0, true},
      {"19x vs 6.06x", 6.065, 19.0, 3.0, false},
  };
  for (const Fixture& f : fixtures) EXPECT_EQ(verdict(f), f.agrees) << f.what;
}

TEST(Bands, OpenEndedBandsPrintAsOneSidedBounds) {
  EXPECT_EQ(band_text(Band{1.0, 1e9}), "> 1.000");
  EXPECT_EQ(band_text(Band{1.0, INFINITY}), "> 1.000");
  EXPECT_EQ(band_text(Band{0.0, 0.25}), "< 0.250");
  EXPECT_EQ(band_text(Band{1.02, 1.21}), "[1.020, 1.210]");
}

ExperimentResult one_effect(double simulated, double se, double low, double high) {
  ExperimentResult r;
  r.id = "seedX";
  EffectResult e;
  e.name = "b over a";
  e.published = 2.0;
  e.simulated = simulated;
  e.low = low;
  e.high = high;
  e.agrees = low <= simulated && simulated <= high;
  e.se = se;
  e.resolved = se == 0 || verdict_resolved(simulated, 2 * se, low, high);
  r.effects.push_back(e);
  return r;
}

TEST(Bands, TheTableHasALegendAndSaysTheExitStatusIgnoresVerdicts) {
  const std::vector<ExperimentResult> r = {one_effect(1.0, 0, 1.5, 2.6)};
  const std::string table = to_table(r, false);
  EXPECT_NE(table.find("2 se: twice the standard error"), std::string::npos) << table;
  EXPECT_EQ(table.find("(noise)"), std::string::npos) << table;  // se = 0 is never noise
  EXPECT_EQ(table.find("effects agree"), std::string::npos) << table;
  EXPECT_EQ(summary_line(r, false),
            "0 of 1 effects agree with their bands (0 of the 1 verdicts are noise); the exit "
            "status does not reflect the 1 NO (--check: exit 1)");
  EXPECT_EQ(summary_line(r, true),
            "0 of 1 effects agree with their bands (0 of the 1 verdicts are noise)");
  EXPECT_FALSE(all_agree(r));
}

TEST(Bands, NoiseOnlyWhenTheStandardErrorCouldFlipTheVerdict) {
  EXPECT_NE(to_table({one_effect(1.6, 0.05, 1.54, 2.6)}).find("yes (noise)"), std::string::npos);
  EXPECT_EQ(to_table({one_effect(2.0, 0.05, 1.54, 2.6)}).find("(noise)"), std::string::npos);
}

}  // namespace
}  // namespace pvlock::reproduce
