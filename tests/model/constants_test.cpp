// SPDX-License-Identifier: GPL-2.0-only
#include "model/constants.hpp"

#include <gtest/gtest.h>

#include <set>

#include "pvlock/lock/knobs.hpp"
#include "scenario/parse.hpp"
#include "workload/estimates.hpp"

namespace pvlock::model {
namespace {

TEST(Constants, EveryEstimateHasARangeAroundItsValue) {
  for (const Constant& c : constants()) {
    EXPECT_FALSE(c.source.empty()) << c.id;
    if (c.provenance != Provenance::estimate && !c.range) continue;
    ASSERT_TRUE(c.range.has_value()) << c.id << " is an estimate without a range";
    EXPECT_LT(c.range->low, c.range->high) << c.id;
    EXPECT_LE(c.range->low, c.value) << c.id;
    EXPECT_GE(c.range->high, c.value) << c.id;
    EXPECT_FALSE(c.range->source.empty()) << c.id;
  }
}

TEST(Constants, IdsAreUnique) {
  std::set<std::string> seen;
  for (const Constant& c : constants()) EXPECT_TRUE(seen.insert(c.id).second) << c.id;
}

TEST(Constants, ValuesAreTheSimulatorsDefaults) {
  EXPECT_EQ(find_constant("costs.vcpu_switch_ns")->value, scenario::Costs{}.vcpu_switch_ns);
  EXPECT_EQ(find_constant("host.kvm.ple_window")->value,
            static_cast<double>(scenario::HostSpec{}.kvm.ple_window));
  EXPECT_EQ(find_constant("ebizzy.zone_hold_ns")->value, workload::estimates::ebizzy::zone_hold_ns);
  EXPECT_EQ(find_constant("host.kvm.ple_window")->name, "ple_window");
  EXPECT_EQ(find_constant("no.such"), nullptr);
  EXPECT_EQ(find_constant("guest.spin_threshold")->value, LockPolicies{}.qspinlock.spin_threshold);
  EXPECT_EQ(find_constant("guest.spin_threshold")->name, "SPIN_THRESHOLD");
}

// Every numeric lock knob is listed with its default: a knob added to knobs.hpp without an
// entry here fails.
TEST(Constants, EveryNumericLockKnobIsListedWithItsDefault) {
  const LockPolicies defaults{};
  for (const Knob& k : all_knobs()) {
    const std::string v = k.get(defaults);
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) continue;
    const Constant* c = find_constant("guest." + std::string(k.name));
    ASSERT_NE(c, nullptr) << k.name;
    EXPECT_EQ(c->value, std::stod(v)) << k.name;
    EXPECT_EQ(c->provenance, Provenance::constant) << k.name;
  }
}

// Every constant's override, at both ends of its range, is a valid scenario --set.
TEST(Constants, OverridesAtTheRangeEndsParse) {
  const std::string path = std::string(PVLOCK_SOURCE_DIR) + "/experiments/seed001/ebizzy.toml";
  for (const Constant& c : constants()) {
    if (!c.range || (!c.workload.empty() && c.workload != "ebizzy")) continue;
    for (double v : {c.range->low, c.range->high}) {
      const std::string set = override_key(c, 0) + "=" + override_value(c, v);
      EXPECT_NO_THROW(scenario::load_scenario_file(path, {set})) << set;
    }
  }
}

TEST(Constants, OverrideKeysAndValues) {
  EXPECT_EQ(override_key(*find_constant("costs.pause_ns"), 1), "costs.pause_ns");
  EXPECT_EQ(override_key(*find_constant("guest.tick_ns"), 1), "vm[1].guest.tick_ns");
  EXPECT_EQ(override_key(*find_constant("ebizzy.user_ns"), 0), "vm[0].workload.user_ns");
  EXPECT_EQ(override_value(*find_constant("ebizzy.faults"), 99.6), "100");
  EXPECT_EQ(override_value(*find_constant("ebizzy.user_ns"), 90000),
            "{dist = \"normal\", mean = 90000, cv = 0.2}");
}

}  // namespace
}  // namespace pvlock::model
