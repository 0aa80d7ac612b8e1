// SPDX-License-Identifier: GPL-2.0-only
// Broken scenario files: each gives exactly one error naming file:line:col and key path.
#include <gtest/gtest.h>

#include <string>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"
#include "scenario_test_util.hpp"

namespace pvlock::scenario {
namespace {

using testing::error_of;

struct BrokenCase {
  const char* name;
  std::string text;
  std::string error;
};

std::string virt_with(const std::string& vm_extra, const std::string& top = "") {
  return top + "[host]\n[[vm]]\nvcpus = 2\n" + vm_extra + "[vm.workload]\ntype = \"lockloop\"\n";
}

const BrokenCase kCases[] = {
    {"syntax", "[run]\nduration_ms = = 3\n",
     "t.toml:2:15: syntax error: Error while parsing value: could not determine value type"},
    {"unknown_top_level", "nope = 1\n[workload]\ntype = \"x\"\n",
     "t.toml:1:1: nope: unknown key 'nope' in the top level; known: run, machine, costs, host, "
     "vm, guest, workload, faults"},
    {"unknown_run_key", "[run]\nduration = 5\n[workload]\ntype = \"x\"\n",
     "t.toml:2:1: run.duration: unknown key 'duration' in [run]; known: duration_ms, warmup_ms, "
     "seed, watchdog_ms"},
    {"run_not_table", "run = 5\n[workload]\ntype = \"x\"\n",
     "t.toml:1:7: run: expected a table, got an integer"},
    {"watchdog_negative", "[run]\nwatchdog_ms = -1\n[workload]\ntype = \"x\"\n",
     "t.toml:2:15: run.watchdog_ms: must be between 0 and 10000000, got -1"},
    {"faults_unknown_key", "[workload]\ntype = \"x\"\n[faults]\ndrop = 0.1\n",
     "t.toml:4:1: faults.drop: unknown key 'drop' in [faults]; known: drop_kick, kick_delay_ns, "
     "spurious_wakeup, ipi_delay_ns, preempt_holder_after_acquire, preempt_queue_head, "
     "preempt_at_access, preempt_at_access_ns"},
    {"faults_probability_range", "[workload]\ntype = \"x\"\n[faults]\ndrop_kick = 1.5\n",
     "t.toml:4:13: faults.drop_kick: must be between 0 and 1, got 1.5"},
    {"faults_delay_type", "[workload]\ntype = \"x\"\n[faults]\nkick_delay_ns = \"x\"\n",
     "t.toml:4:17: faults.kick_delay_ns: expected an integer, got a string"},
    {"faults_preempt_needs_host", "[workload]\ntype = \"x\"\n[faults]\npreempt_queue_head = 0.5\n",
     "t.toml:4:22: faults.preempt_queue_head: deschedules a vCPU, which needs a [host] (bare "
     "metal has no hypervisor)"},
    {"faults_preempt_at_access_range",
     "[workload]\ntype = \"x\"\n[faults]\npreempt_at_access = -0.1\n",
     "t.toml:4:21: faults.preempt_at_access: must be between 0 and 1, got -0.1"},
    {"faults_preempt_at_access_needs_host",
     "[workload]\ntype = \"x\"\n[faults]\npreempt_at_access = 0.001\n",
     "t.toml:4:21: faults.preempt_at_access: deschedules a vCPU, which needs a [host] (bare "
     "metal has no hypervisor)"},
    {"faults_preempt_at_access_ns_zero",
     "[workload]\ntype = \"x\"\n[faults]\npreempt_at_access_ns = 0\n",
     "t.toml:4:24: faults.preempt_at_access_ns: must be between 1 and 1000000000, got 0"},
    {"duration_zero", "[run]\nduration_ms = 0\n[workload]\ntype = \"x\"\n",
     "t.toml:2:15: run.duration_ms: must be > 0 and at most 10000000, got 0"},
    {"duration_negative", "[run]\nduration_ms = -3.5\n[workload]\ntype = \"x\"\n",
     "t.toml:2:15: run.duration_ms: must be > 0 and at most 10000000, got -3.5"},
    {"duration_huge", "[run]\nduration_ms = 1e12\n[workload]\ntype = \"x\"\n",
     "t.toml:2:15: run.duration_ms: must be > 0 and at most 10000000, got 1000000000000"},
    {"duration_string", "[run]\nduration_ms = \"5\"\n[workload]\ntype = \"x\"\n",
     "t.toml:2:15: run.duration_ms: expected a number, got a string"},
    {"duration_nan", "[run]\nduration_ms = nan\n[workload]\ntype = \"x\"\n",
     "t.toml:2:15: run.duration_ms: must be a finite number, got nan"},
    {"seed_negative", "[run]\nseed = -1\n[workload]\ntype = \"x\"\n",
     "t.toml:2:8: run.seed: must be between 0 and 9223372036854775807, got -1"},
    {"seed_float", "[run]\nseed = 1.5\n[workload]\ntype = \"x\"\n",
     "t.toml:2:8: run.seed: expected an integer, got a float"},
    {"zero_sockets", "[machine]\nsockets = 0\n[workload]\ntype = \"x\"\n",
     "t.toml:2:11: machine.sockets: must be between 1 and 64, got 0"},
    {"zero_cores", "[machine]\ncores_per_socket = 0\n[workload]\ntype = \"x\"\n",
     "t.toml:2:20: machine.cores_per_socket: must be between 1 and 1024, got 0"},
    {"too_many_cpus",
     "[machine]\nsockets = 64\ncores_per_socket = 1024\n[workload]\ntype = \"x\"\n",
     "t.toml:1:1: machine: 65536 CPUs (sockets x cores_per_socket x threads_per_core); the "
     "simulator supports at most 4096"},
    {"negative_cost", "[costs]\npause_ns = -1\n[workload]\ntype = \"x\"\n",
     "t.toml:2:12: costs.pause_ns: must be between 0 and 1000000000, got -1"},
    {"unknown_cost", "[costs]\npause = 1\n[workload]\ntype = \"x\"\n",
     "t.toml:2:1: costs.pause: unknown key 'pause' in [costs]; known: pause_ns, l1_hit_ns, "
     "xfer_smt_ns, xfer_socket_ns, xfer_remote_ns, atomic_local_ns, vmexit_ns, hypercall_ns, "
     "kick_send_ns, hlt_exit_ns, ipi_send_ns, ipi_handle_ns, host_wake_idle_ns, "
     "host_wake_polling_ns, vcpu_switch_ns, guest_ctx_switch_ns, guest_wake_ns"},
    {"bare_metal_no_workload", "[run]\nseed = 3\n",
     "t.toml:1:1: workload: a bare-metal scenario (no [host]) needs a [workload] section"},
    {"bare_metal_with_vm", "[[vm]]\nvcpus = 1\n[workload]\ntype = \"x\"\n",
     "t.toml:1:1: vm: [[vm]] needs a [host] section; a bare-metal scenario (no [host]) has "
     "top-level [guest] and [workload] instead"},
    {"host_without_vm", "[host]\nscheduler = \"cfs\"\n",
     "t.toml:1:1: host: a scenario with [host] needs at least one [[vm]] table"},
    {"host_with_top_level_workload", "[host]\n[workload]\ntype = \"x\"\n",
     "t.toml:2:1: workload: a top-level [workload] is for bare-metal scenarios (no [host]); with "
     "[host], put it in each [[vm]] as [vm.workload]"},
    {"vm_not_array_of_tables", "vm = 3\n[host]\n",
     "t.toml:1:6: vm: expected [[vm]] tables, got an integer"},
    {"vm_inline_table", "vm = {vcpus = 2}\n[host]\n",
     "t.toml:1:6: vm: expected [[vm]] tables, got a table"},
    {"vm_empty_array", "vm = []\n[host]\n",
     "t.toml:1:6: vm: a scenario with [host] needs at least one [[vm]] table"},
    {"vm_without_vcpus", "[host]\n[[vm]]\nname = \"a\"\n[vm.workload]\ntype = \"x\"\n",
     "t.toml:2:1: vm[0].vcpus: required key 'vcpus' is missing in [[vm]]"},
    {"vm_without_workload", "[host]\n[[vm]]\nvcpus = 1\n",
     "t.toml:2:1: vm[0].workload: required key 'workload' is missing in [[vm]]"},
    {"workload_without_type", "[host]\n[[vm]]\nvcpus = 1\n[vm.workload]\nthreads = 3\n",
     "t.toml:4:1: vm[0].workload.type: required key 'type' is missing in [vm.workload]"},
    {"vcpus_zero", virt_with("") + "[[vm]]\nvcpus = 0\n",
     "t.toml:7:9: vm[1].vcpus: must be between 1 and 1024, got 0"},
    {"bad_placement", virt_with("placement = \"glued\"\n"),
     "t.toml:4:13: vm[0].placement: unknown value 'glued'; valid: floating, pinned"},
    {"pinned_too_many", virt_with("placement = \"pinned\"\ncount = 3\n"),
     "t.toml:4:13: vm[0].placement: pinned vCPUs need a pCPU each: 6 pinned vCPUs in total "
     "(count x vcpus), the machine has 4 pCPUs"},
    {"duplicate_names",
     "[host]\n[[vm]]\nname = \"a\"\nvcpus = 1\n[vm.workload]\ntype = \"x\"\n"
     "[[vm]]\nname = \"a\"\nvcpus = 1\n[vm.workload]\ntype = \"x\"\n",
     "t.toml:8:8: vm[1].name: VM name 'a' is used twice (copies of a VM with count = k are named "
     "name0..name{k-1}); give each [[vm]] a distinct name"},
    {"bad_vm_name", virt_with("name = \"a b\"\n"),
     "t.toml:4:8: vm[0].name: must be 1-64 characters from A-Z a-z 0-9 _ - . (got 'a b')"},
    {"unknown_vm_key", virt_with("cpus = 3\n"),
     "t.toml:4:1: vm[0].cpus: unknown key 'cpus' in [[vm]]; known: name, count, vcpus, placement, "
     "guest, workload"},
    {"knob_out_of_range", virt_with("guest.spin_threshold = 0\n"),
     "t.toml:4:24: vm[0].guest.spin_threshold: value 0 out of range [1, 1073741824]"},
    {"knob_float", virt_with("guest.pending_loops = 1.5\n"),
     "t.toml:4:23: vm[0].guest.pending_loops: expected an integer, boolean or string (1..65536), "
     "got a float"},
    {"knob_bad_enum", "[guest]\nwait_early = \"sometimes\"\n[workload]\ntype = \"x\"\n",
     "t.toml:2:14: guest.wait_early: expected prev_halted, prev_halted_or_preempted or never, got "
     "'sometimes'"},
    {"knob_bad_mask", "[guest]\nprev_check_mask = 5\n[workload]\ntype = \"x\"\n",
     "t.toml:2:19: guest.prev_check_mask: must be one less than a power of two (e.g. 0xff)"},
    {"guest_bad_bool", "[guest]\nnopvspin = 1\n[workload]\ntype = \"x\"\n",
     "t.toml:2:12: guest.nopvspin: expected true or false, got an integer"},
    {"guest_bad_preempt", "[guest]\npreempt = \"voluntary\"\n[workload]\ntype = \"x\"\n",
     "t.toml:2:11: guest.preempt: unknown value 'voluntary'; valid: full, none"},
    {"redefined_table", virt_with("", "") + "[host]\n",
     "t.toml:6:1: syntax error: Error while parsing table header: cannot redefine existing table "
     "'host'"},
    {"unknown_scheduler",
     "[host]\nscheduler = \"bfs\"\n[[vm]]\nvcpus=1\n[vm.workload]\ntype=\"x\"\n",
     "t.toml:2:13: host.scheduler: unknown value 'bfs'; valid: cfs, eevdf"},
    {"kvm_unknown_spin_loop_mark",
     "[host.kvm]\nin_spin_loop_until = \"kernel\"\n[[vm]]\nvcpus=1\n[vm.workload]\ntype=\"x\"\n",
     "t.toml:2:22: host.kvm.in_spin_loop_until: unknown value 'kernel'; valid: spin_end, "
     "handler_end"},
    {"kvm_unknown", "[host.kvm]\npl = true\n[[vm]]\nvcpus=1\n[vm.workload]\ntype=\"x\"\n",
     "t.toml:2:1: host.kvm.pl: unknown key 'pl' in [host.kvm]; known: pv_unhalt, steal_time, "
     "kick_boost, yield_bailout_undercommit, irq_boost, irq_boost_user_mode, "
     "in_kernel_check_preempted_only, in_spin_loop_until, ple, "
     "ple_window, "
     "ple_window_grow, "
     "ple_window_max, "
     "cycles_per_ns, halt_poll_ns, halt_poll_ns_grow, halt_poll_ns_grow_start, "
     "halt_poll_ns_shrink, "
     "preempted_on_every_put, apicv"},
    // A key that took the kernel's spelling names its new name.
    {"kvm_renamed_key",
     "[host.kvm]\nple_window_cycles = 4096\n[[vm]]\nvcpus=1\n[vm.workload]\ntype=\"x\"\n",
     "t.toml:2:1: host.kvm.ple_window_cycles: unknown key 'ple_window_cycles' in [host.kvm] "
     "(renamed 'ple_window'); known: pv_unhalt, steal_time, kick_boost, "
     "yield_bailout_undercommit, irq_boost, irq_boost_user_mode, in_kernel_check_preempted_only, "
     "in_spin_loop_until, ple, ple_window, ple_window_grow, ple_window_max, cycles_per_ns, "
     "halt_poll_ns, halt_poll_ns_grow, halt_poll_ns_grow_start, halt_poll_ns_shrink, "
     "preempted_on_every_put, apicv"},
    {"kvm_ple_max_below_window",
     "[host.kvm]\nple_window_max = 10\n[[vm]]\nvcpus=1\n[vm.workload]\ntype=\"x\"\n",
     "t.toml:2:18: host.kvm.ple_window_max: ple_window_max (10) must be >= "
     "ple_window (4096)"},
    {"host_tick_too_small", "[host]\ntick_ns = 10\n[[vm]]\nvcpus=1\n[vm.workload]\ntype=\"x\"\n",
     "t.toml:2:11: host.tick_ns: must be between 1000 and 10000000000, got 10"},
    {"workload_array_param", "[workload]\ntype = \"x\"\nsizes = [1, 2]\n",
     "t.toml:3:9: workload.sizes: expected a number, boolean, string or {dist = ...} table, got "
     "an array"},
    {"workload_empty_type", "[workload]\ntype = \"\"\n",
     "t.toml:2:8: workload.type: must not be empty"},
    {"dist_unknown_kind", "[workload]\ntype = \"x\"\nhold = {dist = \"pareto\", mean = 3}\n",
     "t.toml:3:16: workload.hold.dist: unknown value 'pareto'; valid: const, uniform, normal, exp"},
    {"dist_missing_kind", "[workload]\ntype = \"x\"\nhold = {mean = 3}\n",
     "t.toml:3:8: workload.hold.dist: required key 'dist' is missing in a distribution table"},
    {"dist_wrong_key", "[workload]\ntype = \"x\"\nhold = {dist = \"exp\", mean = 3, cv = 1}\n",
     "t.toml:3:33: workload.hold.cv: unknown key 'cv' in a distribution table; known: dist, mean"},
    {"dist_uniform_reversed",
     "[workload]\ntype = \"x\"\nhold = {dist = \"uniform\", min = 5, max = 2}\n",
     "t.toml:3:42: workload.hold.max: must be >= min (5), got 2"},
    {"dist_negative_mean", "[workload]\ntype = \"x\"\nhold = {dist = \"exp\", mean = -1}\n",
     "t.toml:3:30: workload.hold.mean: must be between 0 and 1000000000000, got -1"},
    {"dist_normal_needs_cv", "[workload]\ntype = \"x\"\nhold = {dist = \"normal\", mean = 1}\n",
     "t.toml:3:8: workload.hold.cv: required key 'cv' is missing in a distribution table"},
};

class BrokenScenario : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenScenario, GivesExactError) {
  EXPECT_EQ(error_of(GetParam().text), GetParam().error) << "input:\n" << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(Table, BrokenScenario, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ScenarioErrors, UnknownLockListsEveryRegisteredLock) {
  std::string valid = "auto";
  for (const LockInfo& i : lock_infos<NativeEnv>()) valid += ", " + std::string(i.name);
  EXPECT_EQ(error_of(virt_with("guest.lock = \"nolock\"\n")),
            "t.toml:4:14: vm[0].guest.lock: unknown lock 'nolock'; valid: " + valid);
}

TEST(ScenarioFile, MissingFileIsAnError) {
  try {
    (void)load_scenario_file("/nonexistent/x.toml");
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/x.toml: cannot read scenario: no such file");
  }
}

TEST(ScenarioFile, DirectoryIsAnError) {
  try {
    (void)load_scenario_file("/tmp");
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "/tmp: a directory, not a scenario file");
  }
}

}  // namespace
}  // namespace pvlock::scenario
