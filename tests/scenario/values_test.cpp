// SPDX-License-Identifier: GPL-2.0-only
// Valid scenarios: defaults from scenario.hpp, bare-metal normalization, every knob,
// workload parameters and distributions.
#include <gtest/gtest.h>

#include <string>

#include "pvlock/lock/knobs.hpp"
#include "scenario/parse.hpp"
#include "scenario_test_util.hpp"

namespace pvlock::scenario {
namespace {

using testing::error_of;
using testing::kBare;
using testing::kVirt;

TEST(Values, DefaultsComeFromScenarioHpp) {
  const Scenario s = parse_scenario(kVirt, "dir/my-scn.toml");
  EXPECT_EQ(s.path, "dir/my-scn.toml");
  EXPECT_EQ(s.name, "my-scn");
  EXPECT_EQ(s.run.duration_ms, RunSpec{}.duration_ms);
  EXPECT_EQ(s.run.warmup_ms, RunSpec{}.warmup_ms);
  EXPECT_EQ(s.run.seed, RunSpec{}.seed);
  EXPECT_EQ(s.machine.cpus(), MachineSpec{}.cpus());
  EXPECT_EQ(s.costs.vmexit_ns, Costs{}.vmexit_ns);
  EXPECT_EQ(s.costs.guest_wake_ns, Costs{}.guest_wake_ns);
  ASSERT_TRUE(s.host.has_value());
  EXPECT_FALSE(s.bare_metal());
  EXPECT_EQ(s.host->sched_latency_ns, HostSpec{}.sched_latency_ns);
  EXPECT_EQ(s.host->kvm.halt_poll_ns, HostSpec{}.kvm.halt_poll_ns);
  ASSERT_EQ(s.vms.size(), 1u);
  const VmSpec& v = s.vms[0];
  EXPECT_EQ(v.name, "vm");
  EXPECT_EQ(v.count, 1);
  EXPECT_EQ(v.vcpus, 2);
  EXPECT_EQ(v.placement, VmSpec::Placement::floating);
  EXPECT_EQ(v.guest.lock_name, "auto");
  EXPECT_EQ(v.guest.tick_ns, GuestSpec{}.tick_ns);
  EXPECT_EQ(v.guest.policies.qspinlock.spin_threshold, LockPolicies{}.qspinlock.spin_threshold);
  EXPECT_EQ(v.workload.type, "lockloop");
  EXPECT_TRUE(v.workload.params.empty());
  EXPECT_EQ(v.where.line, 2);
  EXPECT_EQ(v.workload.where.line, 4);
  EXPECT_EQ(v.workload.where.key_path, "vm[0].workload");
}

TEST(Values, AWarmUpMayBeLongerThanTheMeasuredWindow) {
  // The warm-up precedes the window (steady-state measurements skip a long transient).
  const Scenario s =
      parse_scenario(std::string("[run]\nduration_ms = 5\nwarmup_ms = 300\n") + kBare, "t.toml");
  EXPECT_EQ(s.run.duration_ms, 5);
  EXPECT_EQ(s.run.warmup_ms, 300);
  const Scenario d = parse_scenario(std::string("[run]\nduration_ms = 5\n") + kBare, "t.toml");
  EXPECT_EQ(d.run.warmup_ms, RunSpec{}.warmup_ms);
}

TEST(Values, EverySectionIsRead) {
  const Scenario s = parse_scenario(R"(
[run]
duration_ms = 50
warmup_ms = 5
seed = 42
[machine]
sockets = 2
cores_per_socket = 8
threads_per_core = 2
[costs]
pause_ns = 10
xfer_remote_ns = 200.5
[host]
scheduler = "eevdf"
stress_threads = 3
tick_ns = 4000000
[host.kvm]
kick_boost = true
halt_poll_ns = 0
preempted_on_every_put = true
cycles_per_ns = 3
[[vm]]
name = "db"
count = 2
vcpus = 16
placement = "pinned"
[vm.guest]
lock = "mcs"
nopvspin = true
pv_sched_yield = true
vcpu_is_preempted_ns = 30
sched_min_granularity_ns = 1000000
preempt = "none"
[vm.workload]
type = "ebizzy"
threads = 32
[[vm]]
vcpus = 32
[vm.workload]
type = "lockloop"
)",
                                    "x.toml");
  EXPECT_EQ(s.run.duration_ms, 50);
  EXPECT_EQ(s.run.seed, 42u);
  EXPECT_EQ(s.machine.cpus(), 32);
  EXPECT_EQ(s.costs.pause_ns, 10);
  EXPECT_EQ(s.costs.xfer_remote_ns, 200.5);
  EXPECT_EQ(s.host->scheduler, HostSpec::Scheduler::eevdf);
  EXPECT_EQ(s.host->stress_threads, 3);
  EXPECT_EQ(s.host->tick_ns, 4000000);
  EXPECT_TRUE(s.host->kvm.kick_boost);
  EXPECT_EQ(s.host->kvm.halt_poll_ns, 0);
  EXPECT_TRUE(s.host->kvm.preempted_on_every_put);
  EXPECT_EQ(s.host->kvm.cycles_per_ns, 3);
  ASSERT_EQ(s.vms.size(), 2u);
  EXPECT_EQ(s.vms[0].name, "db");
  EXPECT_EQ(s.vms[0].count, 2);
  EXPECT_EQ(s.vms[0].placement, VmSpec::Placement::pinned);
  EXPECT_EQ(s.vms[0].guest.lock_name, "mcs");
  EXPECT_TRUE(s.vms[0].guest.nopvspin);
  EXPECT_TRUE(s.vms[0].guest.pv_sched_yield);
  EXPECT_FALSE(s.vms[1].guest.pv_sched_yield);
  EXPECT_EQ(s.vms[0].guest.vcpu_is_preempted_ns, 30);
  EXPECT_EQ(s.vms[0].guest.sched_min_granularity_ns, 1000000);
  EXPECT_EQ(s.vms[0].guest.preempt, GuestSpec::Preempt::none);
  EXPECT_EQ(s.vms[1].guest.preempt, GuestSpec::Preempt::full);  // the default
  EXPECT_EQ(std::get<std::int64_t>(s.vms[0].workload.params.at("threads").value), 32);
  EXPECT_EQ(s.vms[1].name, "vm1");  // unnamed, one of several
}

TEST(Values, BareMetalBecomesOnePinnedVmOnEveryCpu) {
  const Scenario s =
      parse_scenario("[machine]\nsockets = 2\ncores_per_socket = 3\n[guest]\nlock = \"ticket\"\n" +
                         std::string(kBare),
                     "bm.toml");
  EXPECT_TRUE(s.bare_metal());
  ASSERT_EQ(s.vms.size(), 1u);
  EXPECT_EQ(s.vms[0].name, "machine");
  EXPECT_EQ(s.vms[0].vcpus, 6);
  EXPECT_EQ(s.vms[0].count, 1);
  EXPECT_EQ(s.vms[0].placement, VmSpec::Placement::pinned);
  EXPECT_EQ(s.vms[0].guest.lock_name, "ticket");
  EXPECT_EQ(s.vms[0].workload.type, "lockloop");
  EXPECT_EQ(s.vms[0].workload.where.key_path, "workload");
}

// Every knob of knobs.hpp is accepted in [guest] with its current value (as a string, and as
// an integer or boolean where it is one), and a nonsense value is rejected naming it.
TEST(Values, EveryKnob) {
  const LockPolicies defaults{};
  for (const Knob& k : all_knobs()) {
    const std::string value = k.get(defaults);
    const std::string as_string = "[guest]\n" + std::string(k.name) + " = \"" + value + "\"\n";
    const Scenario s = parse_scenario(as_string + kBare, "k.toml");
    EXPECT_EQ(k.get(s.vms[0].guest.policies), value) << k.name;
    const bool plain = value == "true" || value == "false" ||
                       value.find_first_not_of("0123456789") == std::string::npos;
    if (plain) {
      const std::string typed = "[guest]\n" + std::string(k.name) + " = " + value + "\n";
      EXPECT_EQ(k.get(parse_scenario(typed + kBare, "k.toml").vms[0].guest.policies), value)
          << k.name;
    }
    const std::string bad = "[guest]\n" + std::string(k.name) + " = \"zz\"\n";
    EXPECT_EQ(error_of(bad + kBare)
                  .rfind("t.toml:2:" + std::to_string(k.name.size() + 4) + ": guest." +
                             std::string(k.name) + ": ",
                         0),
              0u)
        << error_of(bad + kBare);
  }
}

TEST(Values, KnobsChangeThePolicies) {
  const Scenario s = parse_scenario(
      "[guest]\nspin_threshold = 0x100\nwait_early = \"prev_halted_or_preempted\"\n"
      "hybrid_stealing = false\nvirt_spin_lock = true\npreempt_check_period = 256\n" +
          std::string(kBare),
      "k.toml");
  const LockPolicies& p = s.vms[0].guest.policies;
  EXPECT_EQ(p.qspinlock.spin_threshold, 256u);
  EXPECT_EQ(p.qspinlock.wait_early, WaitEarlyRule::prev_halted_or_preempted);
  EXPECT_FALSE(p.qspinlock.hybrid_stealing);
  EXPECT_TRUE(p.qspinlock.virt_spin_lock);
  EXPECT_EQ(p.owner_spin.preempt_check_period, 256u);
}

TEST(Values, WorkloadParamsKeepTheirTypesAndPlaces) {
  const Scenario s = parse_scenario(std::string(kBare) +
                                        "flag = true\nn = 3\nx = 2.5\nmode = \"a\"\n"
                                        "hold = {dist = \"uniform\", min = 1, max = 3}\n"
                                        "think = {dist = \"normal\", mean = 100, cv = 0.5}\n",
                                    "w.toml");
  const auto& p = s.vms[0].workload.params;
  EXPECT_EQ(std::get<bool>(p.at("flag").value), true);
  EXPECT_EQ(std::get<std::int64_t>(p.at("n").value), 3);
  EXPECT_EQ(std::get<double>(p.at("x").value), 2.5);
  EXPECT_EQ(std::get<std::string>(p.at("mode").value), "a");
  const Dist& h = std::get<Dist>(p.at("hold").value);
  EXPECT_EQ(h.kind, Dist::Kind::uniform);
  EXPECT_EQ(h.min, 1);
  EXPECT_EQ(h.max, 3);
  const Dist& t = std::get<Dist>(p.at("think").value);
  EXPECT_EQ(t.kind, Dist::Kind::normal);
  EXPECT_EQ(t.cv, 0.5);
  EXPECT_EQ(p.at("n").where.file, "w.toml");
  EXPECT_EQ(p.at("n").where.line, 4);
  EXPECT_EQ(p.at("n").where.column, 5);
  EXPECT_EQ(p.at("n").where.key_path, "workload.n");
}

TEST(Values, SameInputSameScenario) {
  const Scenario a = parse_scenario(kVirt, "t.toml", {"vm[0].count=2"});
  const Scenario b = parse_scenario(kVirt, "t.toml", {"vm[0].count=2"});
  EXPECT_EQ(a.vms[0].count, b.vms[0].count);
  EXPECT_EQ(a.vms[0].name, b.vms[0].name);
}

}  // namespace
}  // namespace pvlock::scenario
