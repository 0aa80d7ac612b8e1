// SPDX-License-Identifier: GPL-2.0-only
// A validated simulation scenario: what `pvlock run SCENARIO.toml` simulates.
//
// TOML layout (all times in ns unless the key says otherwise):
//
//   [run]      duration_ms, warmup_ms, seed
//   [machine]  sockets, cores_per_socket, threads_per_core           (physical CPUs)
//   [costs]    cache, PAUSE, exit, IPI, wake and switch costs (defaults: docs/costs.md skylake-2s)
//   [host]     optional; absent = bare metal. kernel = "X.Y" (era profile), scheduler = "cfs" |
//   "eevdf", slices, stress_threads,
//              housekeeping_*, ttwu_queue
//   [host.kvm] kick_boost, yield_bailout_undercommit, irq_boost, irq_boost_user_mode,
//              in_kernel_check_preempted_only, in_spin_loop_until = "spin_end" | "handler_end",
//              ple_*,
//              halt_poll_*, preempted_on_every_put, pv_unhalt
//   [[vm]]     name, count, vcpus, placement = "floating" | "pinned",
//              [vm.guest] kernel = "X.Y" (era profile), lock + knobs, [vm.workload] type +
//              parameters
//   [faults]   optional fault injection (FaultSpec below); absent = no faults
//
// A bare-metal scenario has no [host] and no [[vm]]: it has top-level [guest] and
// [workload] sections and one OS runs directly on all machine CPUs. Internally it becomes a
// single VmSpec with vcpus = machine CPUs, pinned, and `bare_metal = true`.
//
// The parser (scenario/parse.hpp) reports every error as "FILE:LINE:COL: key.path: message"
// (or "--set key.path=value: message" for command-line overrides).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "pvlock/lock/policy.hpp"

namespace pvlock::scenario {

// Where a value came from, for error messages raised after parsing (e.g. by a workload
// validating its parameters).
struct SourceRef {
  std::string file;  // scenario path, or "--set"
  int line = 0;
  int column = 0;
  std::string key_path;  // e.g. "vm[0].workload.hold_ns"
  // "key.path=value" when the value came from a --set override; errors then name the
  // override ("--set key.path=value: message") instead of file:line:col.
  std::string override_text;
};

// A random duration: a constant, or a distribution table
//   { dist = "const" | "uniform" | "normal" | "exp", mean = ..., cv = ..., min = ..., max = ... }
// normal: mean and coefficient of variation (clamped at 0); uniform: min..max; exp: mean.
struct Dist {
  enum class Kind { constant, uniform, normal, exponential } kind = Kind::constant;
  double mean = 0;  // constant value / mean
  double cv = 0;    // normal only
  double min = 0;   // uniform only
  double max = 0;   // uniform only
};

// A workload parameter as written; the workload validates its own keys (see Workload
// factories), using the SourceRef for its errors.
using ParamValue = std::variant<bool, std::int64_t, double, std::string, Dist>;
struct Param {
  ParamValue value;
  SourceRef where;
};

struct ProgramSpec;  // scenario/program.hpp

struct WorkloadSpec {
  std::string type;      // "lockloop", "torture", "ebizzy", "lock2", "messaging", "fio", "program"
  SourceRef where;       // of the [workload] table itself
  SourceRef type_where;  // of its type key: an unknown type is blamed there
  std::map<std::string, Param> params;  // every other key of the table
  // type = "program": the task programs, validated (params is then empty).
  std::shared_ptr<const ProgramSpec> program;
};

struct GuestSpec {
  // The era profile named by `kernel = "X.Y"` (scenario/eras.hpp, docs/eras.md), "" if none.
  // It set every era switch the section does not set itself; the fields below are the result.
  std::string kernel;
  std::string lock_name = "auto";    // as written: auto|qspinlock|pvqspinlock|tas|ticket|mcs|...
  LockPolicies policies{};           // knob keys of [guest], same names as `--set` knobs
  double vcpu_is_preempted_ns = 2;   // cost of one call (seed 004: ~8 plain, ~30 thunk)
  bool pv_tlb_flush = false;         // KVM PV TLB flush: skip preempted shootdown targets
  bool pv_sched_yield = false;       // KVM PV sched yield: yield to a preempted IPI target
  bool nopvspin = false;             // guest boot parameter: native qspinlock even with PV
  bool realtime_hint = false;        // KVM_HINTS_REALTIME (dedicated pCPUs)
  std::int64_t tick_ns = 4'000'000;  // guest HZ=250
  std::int64_t sched_min_granularity_ns =
      3'000'000;  // guest CFS minimum granularity (shortest slice)
  // CFS's sysctl_sched_latency and sysctl_sched_wakeup_granularity for a guest of >= 8 CPUs
  // (v4.8-v5.4): 6 ms and 1 ms scaled by 1 + ilog2(8) (SCHED_TUNABLESCALING_LOG). The
  // latency sets the slice under either run-queue order and caps the sleeper credit; the
  // wakeup granularity matters to scheduler = "cfs" only.
  std::int64_t sched_latency_ns = 24'000'000;
  std::int64_t sched_wakeup_granularity_ns = 4'000'000;
  // The guest kernel's preemption model (Kconfig "Preemption Model"). full (CONFIG_PREEMPT):
  // the tick may switch a task anywhere preemption and interrupts are enabled, kernel code
  // holding a mutex or rwsem included. none (CONFIG_PREEMPT_NONE, the server default): a
  // task inside a system call is switched only when it sleeps or returns to user mode.
  enum class Preempt { full, none } preempt = Preempt::full;
  // How a vCPU picks among its runnable tasks. rr: in the order they became runnable, a woken
  // task at the back (and every wake-up on a busy vCPU asks it to reschedule). cfs: the
  // least vruntime first, as CFS (v4.8-v5.4, >= 8 CPUs): a woken task placed at the vCPU's
  // min_vruntime less half the 24 ms latency (GENTLE_FAIR_SLEEPERS), and a wake-up
  // preempting only a task more than the 4 ms wakeup granularity ahead of it.
  enum class Scheduler { rr, cfs } scheduler = Scheduler::rr;
  // CONFIG_PARAVIRT_TIME_ACCOUNTING with KVM steal time: the scheduler's clock (rq clock_task)
  // leaves out the time the vCPU waited, runnable, for a pCPU, so slices and vruntime count
  // the time a task had its vCPU (halts in pv_wait included), not the host's wall time.
  bool steal_time_accounting = false;
  // Where try_to_wake_up() puts a woken task (select_task_rq_fair -> select_idle_sibling,
  // the guest's vCPUs taken as one last-level cache). prev: on the vCPU it last ran on,
  // always (tasks never migrate). idle_cpu: its previous vCPU if idle, else the first idle
  // vCPU after it, else the previous one -- kernels before 247f2f6f3c70 (v4.19), which
  // asked only idle_cpu(). available_idle_cpu: the same, but a vCPU the host has preempted
  // (steal time's preempted flag, vcpu_is_preempted()) does not count as idle, as
  // available_idle_cpu() does since 247f2f6f3c70.
  enum class WakePlacement {
    prev,
    idle_cpu,
    available_idle_cpu
  } wake_placement = WakePlacement::prev;
};

struct VmSpec {
  std::string name = "vm";
  int count = 1;  // identical copies, named name0, name1, ... when count > 1
  int vcpus = 1;
  enum class Placement { floating, pinned } placement = Placement::floating;
  GuestSpec guest;
  WorkloadSpec workload;
  SourceRef where;
};

struct MachineSpec {
  int sockets = 1;
  int cores_per_socket = 4;
  int threads_per_core = 1;
  int cpus() const { return sockets * cores_per_socket * threads_per_core; }
};

// Costs in ns. Defaults: the cost profile `skylake-2s` (docs/costs.md); the comment on
// each says M (measured), V (vendor/kernel constant), E (estimate).
struct Costs {
  double pause_ns = 50;         // PAUSE, 140 cycles at 2.8 GHz [V/M]
  double l1_hit_ns = 1.6;       // [M]
  double xfer_smt_ns = 7.5;     // line transfer between SMT siblings [M]
  double xfer_socket_ns = 47;   // same socket [M]
  double xfer_remote_ns = 134;  // cross socket [M]
  double atomic_local_ns = 7;   // uncontended lock xadd/cmpxchg on an owned line [M]
  double vmexit_ns = 620;       // handled exit round trip (vmcall/cpuid class) [M]
  double hypercall_ns = 620;    // vmcall [M]
  double kick_send_ns = 300;    // kvm_vcpu_kick on top of the hypercall [E]
  double hlt_exit_ns = 700;     // HLT exit before poll/block [E]
  double ipi_send_ns = 700;     // x2APIC ICR write exit on the sender [E]
  // guest IPI handler on the target, with its injection [M->]; the posted-interrupt
  // notification to a running vCPU (docs/costs.md: ~300 ns, no exit) is part of it.
  double ipi_handle_ns = 1000;
  double host_wake_idle_ns = 6000;    // kick -> vCPU running, pCPU idle [E]
  double host_wake_polling_ns = 800;  // vCPU still halt-polling [E]
  double vcpu_switch_ns = 3000;       // host switch between two vCPU threads [E]
  double guest_ctx_switch_ns = 1400;  // guest task switch incl. syscall [M->]
  double guest_wake_ns = 1500;        // try_to_wake_up on the waker (runqueue lock, enqueue) [E]
};

struct HostSpec {
  // The era profile named by `kernel = "X.Y"` (scenario/eras.hpp, docs/eras.md), "" if none:
  // it set every era switch of [host] and [host.kvm] the scenario does not set itself.
  std::string kernel;
  enum class Scheduler { cfs, eevdf } scheduler = Scheduler::cfs;
  // CFS as the seeds' hosts ran it (4.19-5.4, >= 8 CPUs): docs/costs.md [V].
  std::int64_t sched_latency_ns = 24'000'000;
  std::int64_t sched_min_granularity_ns = 3'000'000;
  std::int64_t sched_wakeup_granularity_ns = 4'000'000;
  std::int64_t sched_base_slice_ns = 3'000'000;
  std::int64_t tick_ns = 1'000'000;  // host HZ=1000
  // Periodic load balancing (rebalance_domains), per sched domain -- SMT siblings, socket,
  // machine -- checked at every tick: a domain is balanced every `weight x
  // balance_interval_per_cpu_ns` (sd_init: balance_interval = sd_weight ms) [V], times
  // `balance_busy_factor` (32) [V] when the pCPU is busy. An idle pCPU takes no tick
  // (NO_HZ idle): between these balances only a wake-up or a newidle pull gives it work.
  std::int64_t balance_interval_per_cpu_ns = 1'000'000;
  std::int64_t balance_busy_factor = 32;
  // sysctl_sched_migration_cost (500 us) [V]: a pCPU going idle pulls a waiting thread
  // (newidle_balance) only if its average idle period (avg_idle) is at least this long, and
  // never a thread that ran within this long (task_hot: its cache is still warm where it
  // was). 0: every idle pCPU pulls at once, whatever the thread.
  std::int64_t sched_migration_cost_ns = 500'000;
  int stress_threads = 0;  // extra CPU-bound host threads (stress --cpu N)
  // Host housekeeping per pCPU (timer softirqs, RCU, kworkers, QEMU I/O threads): a pinned
  // host thread that wakes at exponentially distributed intervals and runs a short burst.
  // Estimate (docs/costs.md has no measurement): every ~5 ms for ~20 us. Besides the short
  // preemptions it causes, it is what keeps the pCPUs' CFS slice boundaries out of phase on
  // a real host; 0 disables it.
  std::int64_t housekeeping_interval_ns = 5'000'000;
  std::int64_t housekeeping_ns = 20'000;
  // sched feature TTWU_QUEUE (on since v3.0): a wake-up for a CPU outside the waker's
  // last-level cache (here: another socket) is queued on that CPU's wake list and completed
  // by its IPI, so right after try_to_wake_up() the task is still TASK_WAKING and not on a
  // run queue -- a yield_to() to it then fails (the kick boost's race, kvm_sched_yield()).
  bool ttwu_queue = true;
  // sched feature NEXT_BUDDY (off by default in every era). Under EEVDF (v6.6+) it also gates
  // whether pick_next_entity() runs cfs_rq->next, the mark yield_to() leaves on its target:
  // off, a directed yield only pushes the yielder's deadline out. (v6.12 split the pick's
  // gate off as PICK_BUDDY, on by default; not modelled.) CFS always honoured the mark.
  bool next_buddy = false;
  struct Kvm {
    bool pv_unhalt = true;    // KVM_FEATURE_PV_UNHALT offered
    bool steal_time = true;   // KVM_FEATURE_STEAL_TIME (vcpu_is_preempted works)
    bool kick_boost = false;  // seed 001: yield_to the kicked vCPU
    // a1fa4cbd53d0 (2021): kvm_sched_yield() gives up at once when the kicker's pCPU has
    // nothing else to run (single_task_running). The seeds' 2019 hosts yielded anyway.
    bool yield_bailout_undercommit = true;
    bool irq_boost = false;  // d73eb57b80b: vCPUs with pending interrupts count as ready
    // 52acd22faa1a (2021): a vCPU preempted in guest user mode is a directed-yield candidate
    // for a kernel-mode spinner when an interrupt waits for it (the IPI receiver of a TLB
    // shootdown). Before it, only vCPUs preempted in kernel mode were.
    bool irq_boost_user_mode = false;
    // 046ddeed ("KVM: Check preempted_in_kernel for involuntary preemption", v5.3, August
    // 2019): a kernel-mode spinner skips only candidates that were *preempted* in guest user
    // mode. Before it the check applied to every candidate, and kvm_arch_vcpu_in_kernel()
    // read a copy of the privilege level that kvm_arch_vcpu_put() refreshes only at an
    // involuntary preemption: a vCPU woken from HLT was judged by where it was when it was
    // last preempted (user mode, or never preempted: skipped).
    bool in_kernel_check_preempted_only = true;
    // How long a spinner counts as "in a spin loop" (vcpu->spin_loop.in_spin_loop) to the
    // other vCPUs' PLE handlers, which then find it eligible only every other look
    // (kvm_vcpu_eligible_for_directed_yield). handler_end is the kernel's rule: while its own
    // kvm_vcpu_on_spin() runs, which includes its wait in a run queue after yield_to()'s
    // schedule(), dy_eligible cleared when the handler returns; a spinner preempted outside
    // its handler is eligible at every look. spin_end, the experiments' default and the
    // model's one known deviation from the 2019 hosts (docs/investigations/seed001.md):
    // from the spin's first PLE exit until the spin ends or the vCPU is scheduled in,
    // dy_eligible never reset -- under the kernel's rule the model's over-committed
    // ebizzy guests collapse deeper than the seeds' and the kick boost turns into a loss.
    enum class SpinLoopMark { spin_end, handler_end } in_spin_loop_until = SpinLoopMark::spin_end;
    bool ple = true;
    std::int64_t ple_window = 4096;
    std::int64_t ple_window_grow = 2;
    std::int64_t ple_window_max = 1'000'000'000;
    // TSC cycles per ns: PLE measures its window at the TSC's rate (SDM, "PAUSE-loop
    // exiting"). 2.8 GHz as the generic profile's clock; experiments set their host's.
    double cycles_per_ns = 2.8;
    std::int64_t halt_poll_ns = 200'000;  // max; 0 disables halt polling
    std::int64_t halt_poll_ns_grow = 2;
    std::int64_t halt_poll_ns_grow_start = 10'000;
    std::int64_t halt_poll_ns_shrink = 0;  // 0 = reset to 0
    bool preempted_on_every_put = false;   // hosts before 54aa83c90198 (2022)
    // APICv posted interrupts (Skylake-SP and later servers): an interrupt for a vCPU outside
    // guest mode kicks it only if it sets the descriptor's ON bit, i.e. once until the vCPU
    // next enters the guest. false: every interrupt kicks (kvm_vcpu_kick).
    bool apicv = true;
  } kvm;
};

struct RunSpec {
  double duration_ms = 100;
  double warmup_ms = 10;
  std::uint64_t seed = 1;
  // Liveness watchdog (sim/watchdog/): a task of a progress-reporting workload that
  // completes no operation for this long stops the run as stuck. The limit in force is
  // min(watchdog_ms, max((warmup_ms + duration_ms) / 2, 10)), so a short run still catches
  // a hang; 0 turns the watchdog off.
  double watchdog_ms = 1000;
};

// [faults]: deterministic fault injection (sim/faults/), drawn from the simulation's seeded
// generator. Probabilities are in [0, 1]; 0 (the default) injects nothing and draws nothing,
// so a scenario without [faults] runs exactly as before.
struct FaultSpec {
  double drop_kick = 0;                     // P(a KVM_HC_KICK_CPU / pv_kick is lost)
  std::int64_t kick_delay_ns = 0;           // every (not dropped) kick arrives this much later
  double spurious_wakeup = 0;               // P(a pv_wait halt ends early without a kick)
  std::int64_t ipi_delay_ns = 0;            // every IPI (wake-up, call function) arrives this late
  double preempt_holder_after_acquire = 0;  // P(host deschedules a holder on acquisition)
  double preempt_queue_head = 0;            // P(host deschedules a task when it becomes queue head)
  double preempt_at_access = 0;             // P(host deschedules a vCPU after one memory access)
  std::int64_t preempt_at_access_ns = 20'000;  // ... for this much host CPU time
  bool any() const {
    return drop_kick > 0 || kick_delay_ns > 0 || spurious_wakeup > 0 || ipi_delay_ns > 0 ||
           preempt_holder_after_acquire > 0 || preempt_queue_head > 0 || preempt_at_access > 0;
  }
};

struct Scenario {
  std::string path;
  std::string name;  // file stem
  RunSpec run;
  MachineSpec machine;
  Costs costs;
  std::optional<HostSpec> host;  // nullopt = bare metal
  bool bare_metal() const { return !host.has_value(); }
  std::vector<VmSpec> vms;  // as written; a VmSpec with count = k stands for k identical VMs
  FaultSpec faults;
};

}  // namespace pvlock::scenario
