// SPDX-License-Identifier: GPL-2.0-only
// --set overrides: applied before validation, errors name the override.
#include <gtest/gtest.h>

#include "scenario/parse.hpp"
#include "scenario_test_util.hpp"

namespace pvlock::scenario {
namespace {

using testing::error_of;
using testing::kBare;
using testing::kVirt;

TEST(Overrides, BareMetalGuestLock) {
  const Scenario s = parse_scenario(kBare, "t.toml", {"guest.lock=tas"});
  ASSERT_EQ(s.vms.size(), 1u);
  EXPECT_EQ(s.vms[0].guest.lock_name, "tas");
}

TEST(Overrides, VmElementKeys) {
  const Scenario s =
      parse_scenario(kVirt, "t.toml", {"vm[0].guest.lock=mcs", "vm[0].count=3", "run.seed=7"});
  EXPECT_EQ(s.vms[0].guest.lock_name, "mcs");
  EXPECT_EQ(s.vms[0].count, 3);
  EXPECT_EQ(s.run.seed, 7u);
}

TEST(Overrides, ValueTypesAreParsedAsToml) {
  const Scenario s = parse_scenario(
      kVirt, "t.toml",
      {"run.duration_ms=2.5", "run.warmup_ms=0", "host.kvm.ple=false", "host.scheduler=eevdf",
       "vm[0].workload.hold_ns={dist=\"exp\", mean=40}", "vm[0].workload.mode=\"quoted\"",
       "vm[0].workload.word=bare", "vm[0].guest.wait_early=never"});
  EXPECT_DOUBLE_EQ(s.run.duration_ms, 2.5);
  EXPECT_FALSE(s.host->kvm.ple);
  EXPECT_EQ(s.host->scheduler, HostSpec::Scheduler::eevdf);
  const WorkloadSpec& w = s.vms[0].workload;
  EXPECT_EQ(std::get<Dist>(w.params.at("hold_ns").value).kind, Dist::Kind::exponential);
  EXPECT_EQ(std::get<std::string>(w.params.at("mode").value), "quoted");
  EXPECT_EQ(std::get<std::string>(w.params.at("word").value), "bare");
  EXPECT_EQ(s.vms[0].guest.policies.qspinlock.wait_early, WaitEarlyRule::never);
  EXPECT_EQ(w.params.at("word").where.override_text, "vm[0].workload.word=bare");
}

TEST(Overrides, LastOneWinsAndSpacesAreTrimmed) {
  const Scenario s = parse_scenario(kVirt, "t.toml", {"vm[0].count=2", " vm[0].count = 4 "});
  EXPECT_EQ(s.vms[0].count, 4);
}

TEST(Overrides, CreatesMissingTables) {
  const Scenario s = parse_scenario(kBare, "t.toml", {"machine.sockets=2", "costs.pause_ns=10"});
  EXPECT_EQ(s.machine.sockets, 2);
  EXPECT_EQ(s.vms[0].vcpus, 8);  // bare metal: every machine CPU
  EXPECT_DOUBLE_EQ(s.costs.pause_ns, 10);
}

struct OverrideCase {
  const char* name;
  const char* base;
  std::vector<std::string> sets;
  std::string error;
};

const OverrideCase kCases[] = {
    {"no_equals", kVirt, {"vm[0].count"}, "--set vm[0].count: expected key.path=value"},
    {"malformed_path",
     kVirt,
     {"vm[x].count=1"},
     "--set vm[x].count=1: malformed key path (expected names joined by '.', with [N] after an "
     "array name, e.g. vm[0].guest.lock)"},
    {"empty_segment",
     kVirt,
     {"run..seed=1"},
     "--set run..seed=1: malformed key path (expected names joined by '.', with [N] after an "
     "array name, e.g. vm[0].guest.lock)"},
    {"missing_element",
     kVirt,
     {"vm[1].count=3"},
     "--set vm[1].count=3: no vm[1]: 'vm' has 1 element(s) ([N] indexes the [[vm]] tables of "
     "the file, not the VMs a table's count makes: vm[0].count = 2 is two VMs, vm0 and vm1, both "
     "set through vm[0])"},
    {"bare_metal_vm",
     kBare,
     {"vm[0].guest.lock=tas"},
     "--set vm[0].guest.lock=tas: no vm[0]: there is no 'vm' array (a bare-metal scenario sets "
     "guest.* and workload.*)"},
    {"array_without_index",
     kVirt,
     {"vm.count=3"},
     "--set vm.count=3: 'vm' is an array: index it, e.g. vm[0]"},
    {"index_a_table",
     kVirt,
     {"host[0].tick_ns=3"},
     "--set host[0].tick_ns=3: 'host' is not an array, cannot index it"},
    {"through_a_value",
     kVirt,
     {"vm[0].vcpus.x=3"},
     "--set vm[0].vcpus.x=3: 'vm[0].vcpus' is not a table"},
    {"whole_element",
     kVirt,
     {"vm[0]=3"},
     "--set vm[0]=3: name a key inside vm[0], e.g. vm[0].count"},
    {"wrong_type",
     kVirt,
     {"vm[0].count=abc"},
     "--set vm[0].count=abc: expected an integer, got a string"},
    {"out_of_range",
     kVirt,
     {"vm[0].vcpus=0"},
     "--set vm[0].vcpus=0: must be between 1 and 1024, got 0"},
    {"unknown_key",
     kVirt,
     {"run.duraton_ms=5"},
     "--set run.duraton_ms=5: unknown key 'duraton_ms' in [run]; known: duration_ms, "
     "warmup_ms, seed, watchdog_ms"},
    {"unknown_lock_bare_word",
     kBare,
     {"guest.lock=nolock"},
     "--set guest.lock=nolock: unknown lock 'nolock'; valid: "},  // prefix, list checked below
    {"replace_section", kVirt, {"run=5"}, "--set run=5: expected a table, got an integer"},
    {"host_on_bare_metal",
     kBare,
     {"host.scheduler=cfs"},
     "--set host.scheduler=cfs: a top-level [workload] is for bare-metal scenarios (no [host]); "
     "with [host], put it in each [[vm]] as [vm.workload]"},
    {"top_level_guest_when_virtualized",
     kVirt,
     {"guest.lock=tas"},
     "--set guest.lock=tas: a top-level [guest] is for bare-metal scenarios (no [host]); with "
     "[host], put it in each [[vm]] as [vm.guest]"},
    {"dist_inside_override",
     kVirt,
     {"vm[0].workload.hold={dist=\"exp\"}"},
     "--set vm[0].workload.hold={dist=\"exp\"}: vm[0].workload.hold.mean: required key 'mean' "
     "is missing in a distribution table"},
};

class BadOverride : public ::testing::TestWithParam<OverrideCase> {};

TEST_P(BadOverride, NamesTheOverride) {
  const std::string e = error_of(GetParam().base, GetParam().sets);
  if (std::string(GetParam().name) == "unknown_lock_bare_word")
    EXPECT_EQ(e.substr(0, GetParam().error.size()), GetParam().error);
  else
    EXPECT_EQ(e, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(Table, BadOverride, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Overrides, ErrorInFileValueStillNamesTheFile) {
  EXPECT_EQ(error_of("[run]\nseed = -2\n[workload]\ntype = \"x\"\n", {"run.duration_ms=50"}),
            "t.toml:2:8: run.seed: must be between 0 and 9223372036854775807, got -2");
}

}  // namespace
}  // namespace pvlock::scenario
