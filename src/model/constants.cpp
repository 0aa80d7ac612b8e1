// SPDX-License-Identifier: GPL-2.0-only
#include "model/constants.hpp"

#include <fmt/core.h>

#include <cmath>

#include "pvlock/lock/policy.hpp"
#include "scenario/scenario.hpp"
#include "workload/estimates.hpp"

namespace pvlock::model {

std::string_view to_string(Provenance p) {
  switch (p) {
    case Provenance::measured:
      return "measured";
    case Provenance::constant:
      return "constant";
    case Provenance::estimate:
      return "estimate";
  }
  return "?";
}

namespace {

using P = Provenance;

// Sources cited by more than one constant.
constexpr const char* kC2C = "core-to-core-latency (nviennot), Xeon 8275CL / 6242, CAS ping-pong";
constexpr const char* kVmcall =
    "kvm-unit-tests vmcall: 1,559 TSC cycles at 2.5 GHz, Skylake-SP, mitigations on "
    "(Wanpeng Li, kvm list, 2020)";
constexpr const char* kFair = "kernel/sched/fair.c (CFS, v4.19-v6.5), x4 on >= 8 CPUs";
constexpr const char* kHaltPoll = "Documentation/virt/kvm/halt-polling.rst; virt/kvm/kvm_main.c";
constexpr const char* kVmx = "arch/x86/kvm/vmx/vmx.c module parameters";
constexpr const char* kEbizzy =
    "estimate of this model for ebizzy -M on an 80-vCPU guest (workload/estimates.hpp)";
constexpr const char* kHalfTwice =
    "an estimate with no measurement behind it: half to twice the value";

struct Builder {
  std::vector<Constant> out;
  Constant& add(std::string id, std::string name, double value, std::string unit, P prov,
                std::string source) {
    Constant c;
    c.id = std::move(id);
    c.name = name.empty() ? c.id.substr(c.id.rfind('.') + 1) : std::move(name);
    c.value = value;
    c.unit = std::move(unit);
    c.provenance = prov;
    c.source = std::move(source);
    out.push_back(std::move(c));
    return out.back();
  }
};

Constant& range(Constant& c, double low, double high, std::string source) {
  c.range = Range{low, high, std::move(source)};
  return c;
}
Constant& half_twice(Constant& c) { return range(c, c.value / 2, c.value * 2, kHalfTwice); }
Constant& integer(Constant& c) {
  c.integer = true;
  return c;
}

void add_costs(Builder& b) {
  const scenario::Costs d{};
  auto cost = [&](const char* key, double v, P p, std::string src) -> Constant& {
    return b.add(std::string("costs.") + key, "", v, "ns", p, std::move(src));
  };
  range(cost("pause_ns", d.pause_ns, P::constant,
             "Intel optimization manual: PAUSE 'as many as 140 cycles' on Skylake, at 2.8 GHz; "
             "~43 ns reported on Xeon Gold"),
        14, 60, "Cascade Lake's 40 cycles (perf's top-down model) to 140 cycles at 2.3 GHz");
  range(cost("l1_hit_ns", d.l1_hit_ns, P::measured, "AnandTech LMBench: L1D 4 cycles, Skylake-SP"),
        1.6, 2.0, "4 cycles at 2.5-2.0 GHz");
  range(cost("xfer_smt_ns", d.xfer_smt_ns, P::measured, std::string(kC2C) + ", SMT siblings"), 7.4,
        7.6, "the two Cascade Lake parts measured");
  range(cost("xfer_socket_ns", d.xfer_socket_ns, P::measured,
             std::string(kC2C) + ", same socket, median"),
        41, 51, "the CSV rows of the same-socket pairs");
  range(cost("xfer_remote_ns", d.xfer_remote_ns, P::measured,
             std::string(kC2C) + ", cross socket, median"),
        114, 139, "HITM loads across sockets (Intel MLC, Xeon 6140) to the CAS rows' maximum");
  cost("atomic_local_ns", d.atomic_local_ns, P::measured,
       "uncontended lock xadd, i7-6700HQ (Travis Downs, concurrency-hierarchy-bench)");
  range(cost("vmexit_ns", d.vmexit_ns, P::measured, kVmcall), 470, 650,
        "vmcall 1,181 cycles before the Spectre mitigations (b7ffc44d5b2e, 2017) to 1,559 after");
  range(cost("hypercall_ns", d.hypercall_ns, P::measured, kVmcall), 470, 650, "as vmexit_ns");
  range(cost("kick_send_ns", d.kick_send_ns, P::estimate,
             "estimate: kvm_vcpu_kick() on top of the hypercall (a host IPI or a wake-up)"),
        100, 800, "a bare host IPI send (~0.1 us) to one more exit-class round trip");
  range(cost("hlt_exit_ns", d.hlt_exit_ns, P::estimate,
             "estimate: HLT exit before halt polling or blocking"),
        400, 1500, "a hardware exit and entry (400-600 cycles) to two handled exits");
  range(cost("ipi_send_ns", d.ipi_send_ns, P::estimate,
             "estimate: x2APIC ICR write exit (slow path), a vmcall-class exit plus APIC "
             "emulation"),
        600, 800, "1,500-2,000 cycles; the ICR fast path saves ~700 of a 4,238-cycle IPI");
  range(cost("ipi_handle_ns", d.ipi_handle_ns, P::measured,
             "80-vCPU VM on the seeds' host: broadcast IPI ~1.0-1.2 us per target "
             "(4180bf1b655a), round trip to a running vCPU 1.3-1.7 us (kvm-unit-tests ipi)"),
        700, 1500, "the per-target broadcast figures to the unicast round trip");
  range(cost("host_wake_idle_ns", d.host_wake_idle_ns, P::estimate,
             "estimate: kick -> vCPU running on an idle pCPU in C1/C1E, composed of the "
             "C-state exit, a futex wake (~3.75 us) and the entry"),
        4000, 8000, "C1 to C1E exit latencies (intel_idle.c skx_cstates); C6 (+133 us) left out");
  range(cost("host_wake_polling_ns", d.host_wake_polling_ns, P::estimate,
             "estimate: wake of a vCPU whose thread still halt-polls"),
        500, 1000, "bounded by the 'few microseconds' halt polling saves");
  range(cost("vcpu_switch_ns", d.vcpu_switch_ns, P::estimate,
             "estimate: host switch between two vCPU threads, a task switch (~1.4 us) plus "
             "VMCS load, MSR switching and the entry"),
        2000, 4000, "the composition's own spread; never measured");
  range(cost("guest_ctx_switch_ns", d.guest_ctx_switch_ns, P::measured,
             "perf bench sched pipe: 2.79 us per op, two switches and two syscalls (Ingo "
             "Molnar, 2025)"),
        1000, 2000, "the mail's KVM sandbox to a host with more mitigations");
  range(cost("guest_wake_ns", d.guest_wake_ns, P::estimate,
             "estimate: try_to_wake_up() on the waker (run-queue lock, enqueue, IPI decision)"),
        700, 3000, "a fraction of the ~3.75 us futex hand-off (i7-6700HQ) to most of it");
}

void add_host(Builder& b) {
  const scenario::HostSpec d{};
  auto host = [&](const char* key, const char* kname, double v, P p, std::string src) -> Constant& {
    return integer(b.add(std::string("host.") + key, kname, v, "ns", p, std::move(src)));
  };
  host("sched_latency_ns", "sched_latency_ns", static_cast<double>(d.sched_latency_ns), P::constant,
       std::string(kFair) + ": 6 ms normalized");
  host("sched_min_granularity_ns", "sched_min_granularity_ns",
       static_cast<double>(d.sched_min_granularity_ns), P::constant,
       std::string(kFair) + ": 0.75 ms normalized");
  host("sched_wakeup_granularity_ns", "sched_wakeup_granularity_ns",
       static_cast<double>(d.sched_wakeup_granularity_ns), P::constant,
       std::string(kFair) + ": 1 ms normalized");
  host("sched_base_slice_ns", "sched_base_slice_ns", static_cast<double>(d.sched_base_slice_ns),
       P::constant, "kernel/sched/fair.c (EEVDF, v6.6-v6.14): 0.75 ms normalized, x4");
  range(host("tick_ns", "CONFIG_HZ", static_cast<double>(d.tick_ns), P::constant,
             "host HZ=1000 (a distribution's choice)"),
        1'000'000, 4'000'000, "HZ=1000 to HZ=250");
  host("balance_interval_per_cpu_ns", "balance_interval",
       static_cast<double>(d.balance_interval_per_cpu_ns), P::constant,
       "kernel/sched/topology.c sd_init(): balance_interval = sd_weight ms");
  b.out.back().unit = "ns per CPU";
  host("balance_busy_factor", "busy_factor", static_cast<double>(d.balance_busy_factor),
       P::constant, "kernel/sched/topology.c sd_init(): busy_factor = 32 (v4.19-v5.11; 16 later)");
  b.out.back().unit = "";
  host("sched_migration_cost_ns", "sched_migration_cost_ns",
       static_cast<double>(d.sched_migration_cost_ns), P::constant,
       "kernel/sched/fair.c sysctl_sched_migration_cost (0.5 ms)");
  range(host("housekeeping_interval_ns", "", static_cast<double>(d.housekeeping_interval_ns),
             P::estimate,
             "estimate: mean interval of a pCPU's host housekeeping (timers, RCU, kworkers, "
             "QEMU I/O threads); no measurement"),
        1'000'000, 20'000'000, "one burst per host tick (HZ=1000) to one per 20 ms");
  range(host("housekeeping_ns", "", static_cast<double>(d.housekeeping_ns), P::estimate,
             "estimate: one housekeeping burst's length; no measurement"),
        5'000, 100'000, "a softirq's few microseconds to a QEMU I/O thread's 0.1 ms");

  const scenario::HostSpec::Kvm k = d.kvm;
  auto kvm = [&](const char* key, const char* kname, double v, const char* unit, P p,
                 std::string src) -> Constant& {
    return integer(b.add(std::string("host.kvm.") + key, kname, v, unit, p, std::move(src)));
  };
  kvm("ple_window", "ple_window", static_cast<double>(k.ple_window), "TSC cycles", P::constant,
      std::string(kVmx) + " (KVM_VMX_DEFAULT_PLE_WINDOW)");
  kvm("ple_window_grow", "ple_window_grow", static_cast<double>(k.ple_window_grow), "", P::constant,
      kVmx);
  kvm("ple_window_max", "ple_window_max", static_cast<double>(k.ple_window_max), "TSC cycles",
      P::constant,
      std::string(kVmx) + "; the kernel's UINT_MAX, here 1e9 (never reached in a run)");
  Constant& tsc = b.add("host.kvm.cycles_per_ns", "tsc_khz", k.cycles_per_ns, "GHz", P::constant,
                        "TSC rate of the generic profile (2.8 GHz all-core turbo); experiments "
                        "set their host's part");
  range(tsc, 2.0, 3.0, "the nominal 2.0-2.5 GHz of Skylake-SP parts to the all-core turbo");
  kvm("halt_poll_ns", "halt_poll_ns", static_cast<double>(k.halt_poll_ns), "ns", P::constant,
      std::string(kHaltPoll) + " (x86 KVM_HALT_POLL_NS_DEFAULT)");
  kvm("halt_poll_ns_grow", "halt_poll_ns_grow", static_cast<double>(k.halt_poll_ns_grow), "",
      P::constant, kHaltPoll);
  kvm("halt_poll_ns_grow_start", "halt_poll_ns_grow_start",
      static_cast<double>(k.halt_poll_ns_grow_start), "ns", P::constant, kHaltPoll);
  kvm("halt_poll_ns_shrink", "halt_poll_ns_shrink", static_cast<double>(k.halt_poll_ns_shrink), "",
      P::constant, std::string(kHaltPoll) + " (0: reset to 0)");
}

void add_guest(Builder& b) {
  const scenario::GuestSpec d{};
  range(b.add("guest.vcpu_is_preempted_ns", "", d.vcpu_is_preempted_ns, "ns", P::estimate,
              "estimate: one vcpu_is_preempted() call, inlined steal-time read"),
        2, 30, "an inlined read to the callee-save thunk (seed 004: ~8 plain call, ~30 thunk)");
  range(integer(b.add("guest.tick_ns", "CONFIG_HZ", static_cast<double>(d.tick_ns), "ns",
                      P::constant, "guest HZ=250 (distribution kernels' default)")),
        1'000'000, 4'000'000, "HZ=1000 to HZ=250");
  integer(b.add("guest.sched_min_granularity_ns", "sched_min_granularity_ns",
                static_cast<double>(d.sched_min_granularity_ns), "ns", P::constant,
                std::string(kFair) + ": 0.75 ms normalized"));
  integer(b.add("guest.sched_latency_ns", "sched_latency_ns",
                static_cast<double>(d.sched_latency_ns), "ns", P::constant,
                std::string(kFair) + ": 6 ms normalized"));
  integer(b.add("guest.sched_wakeup_granularity_ns", "sched_wakeup_granularity_ns",
                static_cast<double>(d.sched_wakeup_granularity_ns), "ns", P::constant,
                std::string(kFair) + ": 1 ms normalized"));
}

// The lock library's numeric knobs ([vm.guest] keys, kernel constants): the defaults every
// lock uses, with the kernel's spelling. Kernel constants, not estimates, so no range: a
// screening that varies one names it in --params with a range of its own.
void add_lock_knobs(Builder& b) {
  const LockPolicies d{};
  auto knob = [&](const char* key, const char* kname, double v, const char* unit,
                  std::string src) -> Constant& {
    return integer(b.add(std::string("guest.") + key, kname, v, unit, P::constant, std::move(src)));
  };
  knob("pending_loops", "_Q_PENDING_LOOPS", d.qspinlock.pending_loops, "re-reads",
       "arch/x86/include/asm/qspinlock.h: _Q_PENDING_LOOPS (1 << 9); the generic default in "
       "kernel/locking/qspinlock.c is 1");
  knob("spin_threshold", "SPIN_THRESHOLD", d.qspinlock.spin_threshold, "iterations",
       "arch/x86/include/asm/spinlock.h: SPIN_THRESHOLD (1 << 15), used by "
       "qspinlock_paravirt.h pv_wait_node()/pv_wait_head_or_lock()");
  knob("prev_check_mask", "PV_PREV_CHECK_MASK", d.qspinlock.prev_check_mask, "mask",
       "kernel/locking/qspinlock_paravirt.h: PV_PREV_CHECK_MASK (0xff), pv_wait_early()");
  knob("preempt_check_period", "", d.owner_spin.preempt_check_period, "iterations",
       "kernel/locking/mutex.c mutex_spin_on_owner(), rwsem.c rwsem_spin_on_owner(): "
       "vcpu_is_preempted(owner) on every iteration since v4.9");
}

void add_workloads(Builder& b) {
  namespace E = workload::estimates;
  auto w = [&](const char* type, const char* key, double v, const char* unit, P p,
               std::string src) -> Constant& {
    Constant& c = b.add(std::string(type) + "." + key, "", v, unit, p, std::move(src));
    c.workload = type;
    return c;
  };
  {
    const char* t = "ebizzy";
    range(integer(w(t, "tasks_per_vcpu", E::ebizzy::tasks_per_vcpu, "tasks", P::estimate,
                    std::string(kEbizzy) + ": threads per vCPU")),
          1, 4, "ebizzy -t at one to four times the vCPUs");
    Constant& user = w(t, "user_ns", E::ebizzy::user_ns, "ns", P::estimate,
                       std::string(kEbizzy) + ": user work per record (mean, cv 0.2)");
    user.cv = E::ebizzy::user_cv;
    half_twice(user);
    range(integer(w(t, "faults", E::ebizzy::faults, "faults", P::estimate,
                    std::string(kEbizzy) + ": page faults per record")),
          64, 256, "half to twice the value");
    Constant& fault = w(t, "fault_ns", E::ebizzy::fault_ns, "ns", P::estimate,
                        "anonymous 4 KiB fault ~1.0 us (i7 11th gen), ~1.2-2 us scaled to "
                        "Skylake-SP (mean, cv 0.3)");
    fault.cv = E::ebizzy::fault_cv;
    range(fault, 600, 2400, "the blog run's minimum (0.58 us) to twice the value");
    integer(w(t, "lru_batch", E::ebizzy::lru_batch, "pages", P::constant,
              "PAGEVEC_SIZE (include/linux/pagevec.h, v5.x)"));
    half_twice(w(t, "lru_hold_ns", E::ebizzy::lru_hold_ns, "ns", P::estimate,
                 std::string(kEbizzy) + ": lru_lock hold per pagevec drain"));
    integer(w(t, "zone_batch", E::ebizzy::zone_batch, "pages", P::constant,
              "per-CPU page list batch (mm/page_alloc.c zone_batchsize) of a large zone"));
    half_twice(w(t, "zone_hold_ns", E::ebizzy::zone_hold_ns, "ns", P::estimate,
                 std::string(kEbizzy) + ": zone->lock hold per batch refill"));
    half_twice(w(t, "madvise_ns", E::ebizzy::madvise_ns, "ns", P::estimate,
                 std::string(kEbizzy) + ": madvise(MADV_DONTNEED) outside its locks"));
    range(integer(w(t, "madvise_lru_locks", E::ebizzy::madvise_lru_locks, "locks", P::estimate,
                    std::string(kEbizzy) + ": lru_lock acquisitions per madvise")),
          2, 8, "half to twice the value");
    half_twice(w(t, "madvise_lru_hold_ns", E::ebizzy::madvise_lru_hold_ns, "ns", P::estimate,
                 std::string(kEbizzy) + ": lru_lock hold in madvise"));
    range(integer(w(t, "madvise_zone_locks", E::ebizzy::madvise_zone_locks, "locks", P::estimate,
                    std::string(kEbizzy) + ": zone->lock acquisitions per madvise")),
          1, 4, "half to twice the value");
    range(w(t, "flush_handler_ns", E::ebizzy::flush_handler_ns, "ns", P::estimate,
            "TLB flush IPI handler, from the empty-handler broadcast IPI (~1.0-1.2 us per "
            "target, 4180bf1b655a) plus the INVLPGs"),
          1000, 3000, "the empty handler to a handler flushing a few hundred cycles x pages");
  }
  {
    const char* t = "messaging";
    const char* src = "estimate of this model for hackbench over pipes";
    half_twice(w(t, "send_compute_ns", E::messaging::send_compute_ns, "ns", P::estimate,
                 std::string(src) + ": write() outside pipe->mutex"));
    half_twice(w(t, "send_hold_ns", E::messaging::send_hold_ns, "ns", P::estimate,
                 std::string(src) + ": pipe->mutex hold in write()"));
    half_twice(w(t, "recv_compute_ns", E::messaging::recv_compute_ns, "ns", P::estimate,
                 std::string(src) + ": read() outside pipe->mutex"));
    half_twice(w(t, "recv_hold_ns", E::messaging::recv_hold_ns, "ns", P::estimate,
                 std::string(src) + ": pipe->mutex hold in read()"));
    half_twice(w(t, "fork_ns", E::messaging::fork_ns, "ns", P::estimate,
                 "estimate: fork() outside its locks, of the order of lmbench's ~100 us "
                 "fork+exit of a small process"));
    half_twice(w(t, "fork_anon_vma_hold_ns", E::messaging::fork_anon_vma_hold_ns, "ns", P::estimate,
                 "estimate: anon_vma root lock hold in fork()"));
    half_twice(w(t, "exit_ns", E::messaging::exit_ns, "ns", P::estimate,
                 "estimate: exit() outside its locks (lmbench order, as fork_ns)"));
    half_twice(w(t, "exit_anon_vma_hold_ns", E::messaging::exit_anon_vma_hold_ns, "ns", P::estimate,
                 "estimate: anon_vma root lock hold in exit()"));
    half_twice(w(t, "tasklist_hold_ns", E::messaging::tasklist_hold_ns, "ns", P::estimate,
                 "estimate: tasklist_lock hold in fork() and exit()"));
    half_twice(w(t, "reap_scan_ns", E::messaging::reap_scan_ns, "ns per child", P::estimate,
                 "estimate: wait()'s scan of one child"));
    half_twice(w(t, "i_mmap_hold_ns", E::messaging::i_mmap_hold_ns, "ns", P::estimate,
                 "estimate: i_mmap_rwsem hold per file VMA in fork() and exit()"));
  }
  half_twice(w("lock2", "compute_ns", E::lock2::compute_ns, "ns", P::estimate,
               "estimate: will-it-scale lock2 fcntl() syscall work around flc_lock"));
  half_twice(w("lock2", "hold_ns", E::lock2::hold_ns, "ns", P::estimate,
               "estimate: flc_lock hold per fcntl()"));
  half_twice(w("fio", "compute_ns", E::fio::compute_ns, "ns", P::estimate,
               "estimate: fio and syscall work per 4 KiB write"));
  range(w("fio", "hold_ns", E::fio::hold_ns, "ns", P::estimate,
          "inode rwsem hold per write, derived from the seed's 2563 MB/s (one writer at a time)"),
        1000, 2000, "the published bandwidth's hold (1.6 us per 4 KiB) -/+ a third");
}

std::vector<Constant> build() {
  Builder b;
  add_costs(b);
  add_host(b);
  add_guest(b);
  add_lock_knobs(b);
  add_workloads(b);
  return std::move(b.out);
}

}  // namespace

const std::vector<Constant>& constants() {
  static const std::vector<Constant> all = build();
  return all;
}

const Constant* find_constant(std::string_view id) {
  for (const Constant& c : constants())
    if (c.id == id) return &c;
  return nullptr;
}

std::string override_key(const Constant& c, int vm) {
  if (!c.workload.empty())
    return fmt::format("vm[{}].workload.{}", vm, c.id.substr(c.workload.size() + 1));
  if (c.id.rfind("guest.", 0) == 0) return fmt::format("vm[{}].{}", vm, c.id);
  return c.id;
}

std::string override_value(const Constant& c, double v) {
  if (c.integer) return fmt::format("{}", static_cast<long long>(std::llround(v)));
  if (c.cv > 0) return fmt::format("{{dist = \"normal\", mean = {:.6g}, cv = {}}}", v, c.cv);
  return fmt::format("{:.6g}", v);
}

}  // namespace pvlock::model
