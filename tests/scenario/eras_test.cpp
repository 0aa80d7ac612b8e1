// SPDX-License-Identifier: GPL-2.0-only
// Kernel era profiles (scenario/eras.hpp): `kernel = "X.Y"` sets every era switch, explicit
// keys and --set overrides win, unknown profiles are errors naming the key, and every shipped
// experiment names its guest and host profile.
#include "scenario/eras.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scenario_test_util.hpp"

namespace pvlock::scenario {
namespace {

namespace fs = std::filesystem;
using testing::error_of;

std::string virt(const std::string& host, const std::string& guest) {
  return "[host]\n" + host + "\n[[vm]]\nvcpus = 2\n[vm.guest]\n" + guest +
         "\n[vm.workload]\ntype = \"lockloop\"\n";
}

Scenario parse(const std::string& text, const std::vector<std::string>& sets = {}) {
  return parse_scenario(text, "t.toml", sets);
}

TEST(ErasProfile, NamesOnlyReleases) {
  for (const char* ok : {"4.2", "4.7", "4.8", "4.20", "5.0", "5.3", "5.19", "6.0", "6.12"})
    EXPECT_TRUE(eras::find_profile(ok).has_value()) << ok;
  for (const char* bad : {"4.1", "3.19", "4.21", "5.20", "6.13", "7.0", "05.3", "5", "5.", ".3",
                          "5.3.1", "5.03", "v5.3", ""})
    EXPECT_FALSE(eras::find_profile(bad).has_value()) << bad;
}

TEST(ErasProfile, EveryStepChangesItsSwitch) {
  for (eras::Side side : {eras::Side::guest, eras::Side::host})
    for (const eras::EraSwitch& sw : eras::switches(side)) {
      SCOPED_TRACE(std::string(sw.key));
      ASSERT_FALSE(sw.steps.empty());
      eras::Value before = sw.oldest;
      for (const eras::Step& st : sw.steps) {
        EXPECT_FALSE(st.commit.empty());
        EXPECT_NE(st.value, before) << eras::to_string(st.since);
        EXPECT_EQ(eras::value_in(sw, st.since), st.value);
        before = st.value;
      }
    }
}

TEST(ErasGuest, ProfileSetsEverySwitch) {
  const GuestSpec old = parse(virt("", "kernel = \"4.8\"")).vms[0].guest;
  EXPECT_EQ(old.kernel, "4.8");
  EXPECT_EQ(old.policies.qspinlock.wait_early, WaitEarlyRule::prev_halted);
  EXPECT_TRUE(old.policies.qspinlock.hybrid_stealing);
  EXPECT_TRUE(old.policies.qspinlock.lock_stealing);
  EXPECT_TRUE(old.policies.qspinlock.kick_at_unlock);
  EXPECT_FALSE(old.policies.osq.break_on_prev_preempted);
  EXPECT_EQ(old.policies.owner_spin.preempt_check_period, 0u);
  EXPECT_FALSE(old.policies.handoff.mutex);
  EXPECT_FALSE(old.policies.handoff.rwsem);
  EXPECT_EQ(old.wake_placement, GuestSpec::WakePlacement::idle_cpu);

  const GuestSpec g53 = parse(virt("", "kernel = \"5.3\"")).vms[0].guest;
  EXPECT_EQ(g53.policies.qspinlock.wait_early, WaitEarlyRule::prev_halted_or_preempted);
  EXPECT_TRUE(g53.policies.osq.break_on_prev_preempted);
  EXPECT_EQ(g53.policies.owner_spin.preempt_check_period, 1u);
  EXPECT_TRUE(g53.policies.handoff.mutex);
  EXPECT_TRUE(g53.policies.handoff.rwsem);
  EXPECT_EQ(g53.wake_placement, GuestSpec::WakePlacement::available_idle_cpu);

  const GuestSpec g54 = parse(virt("", "kernel = \"5.4\"")).vms[0].guest;
  EXPECT_EQ(g54.policies.qspinlock.wait_early, WaitEarlyRule::prev_halted);
  // Without a profile: the defaults of scenario.hpp.
  EXPECT_EQ(parse(virt("", "")).vms[0].guest.kernel, "");
  EXPECT_EQ(parse(virt("", "")).vms[0].guest.wake_placement, GuestSpec::WakePlacement::prev);
}

// The pvqspinlock before 4.8: the first one (4.2), the deferred kick (4.3), one steal attempt
// and the early wait (4.5).
TEST(ErasGuest, HistoricPvqspinlock) {
  const QspinlockPolicy g42 = parse(virt("", "kernel = \"4.2\"")).vms[0].guest.policies.qspinlock;
  EXPECT_FALSE(g42.lock_stealing);
  EXPECT_FALSE(g42.hybrid_stealing);
  EXPECT_FALSE(g42.kick_at_unlock);
  EXPECT_EQ(g42.wait_early, WaitEarlyRule::never);

  const QspinlockPolicy g43 = parse(virt("", "kernel = \"4.4\"")).vms[0].guest.policies.qspinlock;
  EXPECT_FALSE(g43.lock_stealing);
  EXPECT_TRUE(g43.kick_at_unlock);
  EXPECT_EQ(g43.wait_early, WaitEarlyRule::never);

  const QspinlockPolicy g45 = parse(virt("", "kernel = \"4.7\"")).vms[0].guest.policies.qspinlock;
  EXPECT_TRUE(g45.lock_stealing);
  EXPECT_FALSE(g45.hybrid_stealing);
  EXPECT_TRUE(g45.kick_at_unlock);
  EXPECT_EQ(g45.wait_early, WaitEarlyRule::prev_halted);

  // The other switches keep their oldest values back to 4.2.
  const GuestSpec g = parse(virt("", "kernel = \"4.2\"")).vms[0].guest;
  EXPECT_FALSE(g.policies.osq.break_on_prev_preempted);
  EXPECT_EQ(g.policies.owner_spin.preempt_check_period, 0u);
  EXPECT_FALSE(g.policies.handoff.mutex);
  EXPECT_EQ(g.wake_placement, GuestSpec::WakePlacement::idle_cpu);
}

TEST(ErasGuest, ExplicitKeysAndOverridesWin) {
  const GuestSpec g =
      parse(virt("", "kernel = \"4.8\"\nmutex_handoff = true\nwake_placement = \"prev\""))
          .vms[0]
          .guest;
  EXPECT_TRUE(g.policies.handoff.mutex);
  EXPECT_EQ(g.wake_placement, GuestSpec::WakePlacement::prev);
  EXPECT_FALSE(g.policies.handoff.rwsem);  // still the profile's

  const GuestSpec s =
      parse(virt("", "kernel = \"5.3\""), {"vm[0].guest.wait_early=never"}).vms[0].guest;
  EXPECT_EQ(s.policies.qspinlock.wait_early, WaitEarlyRule::never);
  // --set may change the profile itself; keys the file sets still win over it.
  const GuestSpec p =
      parse(virt("", "kernel = \"5.3\"\nrwsem_handoff = false"), {"vm[0].guest.kernel=\"4.8\""})
          .vms[0]
          .guest;
  EXPECT_EQ(p.kernel, "4.8");
  EXPECT_FALSE(p.policies.handoff.mutex);
  EXPECT_FALSE(p.policies.handoff.rwsem);
}

TEST(ErasGuest, BareMetalGuestTakesAProfile) {
  const Scenario sc = parse("[guest]\nkernel = \"4.9\"\n[workload]\ntype = \"lockloop\"\n");
  EXPECT_EQ(sc.vms[0].guest.kernel, "4.9");
  EXPECT_FALSE(sc.vms[0].guest.policies.handoff.mutex);
  EXPECT_TRUE(sc.vms[0].guest.policies.osq.break_on_prev_preempted);
}

TEST(ErasHost, ProfileSetsEverySwitch) {
  const HostSpec h52 = *parse(virt("kernel = \"5.2\"", "")).host;
  EXPECT_EQ(h52.kernel, "5.2");
  EXPECT_EQ(h52.scheduler, HostSpec::Scheduler::cfs);
  EXPECT_TRUE(h52.kvm.preempted_on_every_put);
  EXPECT_FALSE(h52.kvm.yield_bailout_undercommit);
  EXPECT_FALSE(h52.kvm.in_kernel_check_preempted_only);
  EXPECT_FALSE(h52.kvm.irq_boost);
  EXPECT_FALSE(h52.kvm.irq_boost_user_mode);
  EXPECT_FALSE(h52.kvm.kick_boost);

  const HostSpec h61 = *parse(virt("kernel = \"6.1\"", "")).host;
  EXPECT_EQ(h61.scheduler, HostSpec::Scheduler::cfs);
  EXPECT_FALSE(h61.kvm.preempted_on_every_put);
  EXPECT_TRUE(h61.kvm.yield_bailout_undercommit);
  EXPECT_TRUE(h61.kvm.in_kernel_check_preempted_only);
  EXPECT_TRUE(h61.kvm.irq_boost);
  EXPECT_TRUE(h61.kvm.irq_boost_user_mode);
  EXPECT_TRUE(h61.kvm.kick_boost);

  EXPECT_EQ(parse(virt("kernel = \"6.6\"", "")).host->scheduler, HostSpec::Scheduler::eevdf);
}

TEST(ErasHost, ExplicitKeysAndOverridesWin) {
  const HostSpec h =
      *parse(virt("kernel = \"5.2\"\nscheduler = \"eevdf\"\n[host.kvm]\nirq_boost = true", ""))
           .host;
  EXPECT_EQ(h.scheduler, HostSpec::Scheduler::eevdf);
  EXPECT_TRUE(h.kvm.irq_boost);
  EXPECT_TRUE(h.kvm.preempted_on_every_put);  // the profile's
  const HostSpec s =
      *parse(virt("kernel = \"5.2\"", ""), {"host.kvm.kick_boost=true", "host.kvm.apicv=false"})
           .host;
  EXPECT_TRUE(s.kvm.kick_boost);
  EXPECT_FALSE(s.kvm.apicv);
  EXPECT_FALSE(s.kvm.irq_boost);
}

TEST(ErasErrors, UnknownProfileNamesFileLineAndKey) {
  EXPECT_EQ(error_of(virt("", "kernel = \"5.99\"")),
            "t.toml:6:10: vm[0].guest.kernel: unknown guest kernel profile '5.99'; profiles: " +
                eras::profile_range());
  EXPECT_EQ(error_of(virt("kernel = \"2.6\"", "")),
            "t.toml:2:10: host.kernel: unknown host kernel profile '2.6'; profiles: " +
                eras::profile_range());
  EXPECT_EQ(error_of(virt("kernel = 5.3", "")),
            "t.toml:2:10: host.kernel: expected a string naming a host kernel profile (kernel = "
            "\"5.3\"; on the command line --set 'host.kernel=\"5.3\"'), got a float");
  EXPECT_EQ(error_of(virt("", ""), {"vm[0].guest.kernel=4.1"}),
            "--set vm[0].guest.kernel=4.1: expected a string naming a guest kernel profile "
            "(kernel = \"5.3\"; on the command line --set 'vm[0].guest.kernel=\"5.3\"'), got a "
            "float");
  EXPECT_EQ(error_of(virt("", ""), {"vm[0].guest.kernel=\"4.1\""}),
            "--set vm[0].guest.kernel=\"4.1\": unknown guest kernel profile '4.1'; profiles: " +
                eras::profile_range());
  // [host.kvm] not a table under a profile: the host section's own error.
  EXPECT_NE(error_of(virt("kernel = \"5.3\"\nkvm = 1", "")).find("host.kvm"), std::string::npos);
}

// Every scenario of experiments/ and validation/ names the kernels it models.
TEST(ErasShipped, EveryExperimentNamesItsProfiles) {
  const fs::path root = PVLOCK_SOURCE_DIR;
  int n = 0;
  for (const char* dir : {"experiments", "validation"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (e.path().extension() != ".toml" || e.path().filename() == "experiment.toml") continue;
      SCOPED_TRACE(e.path().string());
      const Scenario sc = load_scenario_file(e.path().string());
      ++n;
      ASSERT_TRUE(sc.host.has_value());
      EXPECT_TRUE(eras::find_profile(sc.host->kernel).has_value()) << "[host] kernel";
      for (const VmSpec& v : sc.vms)
        EXPECT_TRUE(eras::find_profile(v.guest.kernel).has_value()) << v.name << " kernel";
    }
  EXPECT_GE(n, 6);
}

// docs/eras.md documents every switch with the commit that changed it.
TEST(ErasShipped, DocsNameEverySwitchAndCommit) {
  std::ifstream in(fs::path(PVLOCK_SOURCE_DIR) / "docs" / "eras.md");
  ASSERT_TRUE(in) << "docs/eras.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (eras::Side side : {eras::Side::guest, eras::Side::host})
    for (const eras::EraSwitch& sw : eras::switches(side)) {
      // Built with append(), not operator+ (GCC 12's -Wrestrict false positive, PR 105329).
      std::string quoted = "`";
      quoted.append(sw.key).append("`");
      EXPECT_NE(doc.find(quoted), std::string::npos) << sw.key;
      for (const eras::Step& st : sw.steps) {
        const std::string_view id = st.commit.substr(0, st.commit.find(' '));
        EXPECT_NE(doc.find(std::string(id)), std::string::npos) << sw.key << ": " << id;
        std::string release = "v";
        release.append(eras::to_string(st.since));
        EXPECT_NE(doc.find(release), std::string::npos) << sw.key << ": " << release;
      }
    }
}

}  // namespace
}  // namespace pvlock::scenario
