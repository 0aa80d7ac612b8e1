// SPDX-License-Identifier: GPL-2.0-only
#include "scenario/sections.hpp"

#include <fmt/core.h>

#include <cmath>
#include <string>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/knobs.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/profile.hpp"

namespace pvlock::scenario::detail {

namespace {

constexpr double kMaxCostNs = 1e9;                       // 1 s for any single cost
constexpr std::int64_t kMaxIntervalNs = 10'000'000'000;  // 10 s for slices and ticks
constexpr std::int64_t kMinTickNs = 1'000;               // 1 us: no tick storms

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

}  // namespace

void read_run(Section& s, RunSpec& out) {
  s.read_positive("duration_ms", out.duration_ms, 1e7);
  s.read("warmup_ms", out.warmup_ms, 0, 1e7);
  s.read("seed", out.seed, std::numeric_limits<std::uint64_t>::max());
  s.read("watchdog_ms", out.watchdog_ms, 0, 1e7);
  // The warm-up runs before the measured window (simulated time = warmup_ms + duration_ms),
  // so it may be longer than the window: a run measuring a steady state skips a long
  // start-up transient and then measures briefly.
  s.finish();
}

void read_faults(Section& s, FaultSpec& f, bool virtualized) {
  constexpr std::int64_t kMaxDelayNs = 1'000'000'000;  // 1 s
  s.read("drop_kick", f.drop_kick, 0, 1);
  s.read("kick_delay_ns", f.kick_delay_ns, 0, kMaxDelayNs);
  s.read("spurious_wakeup", f.spurious_wakeup, 0, 1);
  s.read("ipi_delay_ns", f.ipi_delay_ns, 0, kMaxDelayNs);
  s.read("preempt_holder_after_acquire", f.preempt_holder_after_acquire, 0, 1);
  s.read("preempt_queue_head", f.preempt_queue_head, 0, 1);
  s.read("preempt_at_access", f.preempt_at_access, 0, 1);
  s.read("preempt_at_access_ns", f.preempt_at_access_ns, 1, kMaxDelayNs);
  // Descheduling a vCPU is the host scheduler's doing: bare metal has none.
  if (!virtualized)
    for (const char* key : {"preempt_holder_after_acquire", "preempt_queue_head",
                            "preempt_at_access", "preempt_at_access_ns"})
      if (s.table().contains(key))
        s.fail(key, "deschedules a vCPU, which needs a [host] (bare metal has no hypervisor)");
  s.finish();
}

void read_machine(Section& s, MachineSpec& out) {
  s.read("sockets", out.sockets, 1, 64);
  s.read("cores_per_socket", out.cores_per_socket, 1, 1024);
  s.read("threads_per_core", out.threads_per_core, 1, 8);
  if (out.cpus() > 4096)
    s.fail_table(
        fmt::format("{} CPUs (sockets x cores_per_socket x threads_per_core); the "
                    "simulator supports at most 4096",
                    out.cpus()));
  s.finish();
}

void read_costs(Section& s, Costs& c) {
  const std::pair<const char*, double*> fields[] = {
      {"pause_ns", &c.pause_ns},
      {"l1_hit_ns", &c.l1_hit_ns},
      {"xfer_smt_ns", &c.xfer_smt_ns},
      {"xfer_socket_ns", &c.xfer_socket_ns},
      {"xfer_remote_ns", &c.xfer_remote_ns},
      {"atomic_local_ns", &c.atomic_local_ns},
      {"vmexit_ns", &c.vmexit_ns},
      {"hypercall_ns", &c.hypercall_ns},
      {"kick_send_ns", &c.kick_send_ns},
      {"hlt_exit_ns", &c.hlt_exit_ns},
      {"ipi_send_ns", &c.ipi_send_ns},
      {"ipi_handle_ns", &c.ipi_handle_ns},
      {"host_wake_idle_ns", &c.host_wake_idle_ns},
      {"host_wake_polling_ns", &c.host_wake_polling_ns},
      {"vcpu_switch_ns", &c.vcpu_switch_ns},
      {"guest_ctx_switch_ns", &c.guest_ctx_switch_ns},
      {"guest_wake_ns", &c.guest_wake_ns},
  };
  for (const auto& [key, field] : fields) s.read(key, *field, 0, kMaxCostNs);
  s.finish();
}

void read_host(Section& s, HostSpec& h) {
  s.take("kernel");  // applied before the section is read (with_profile)
  s.read_enum("scheduler", h.scheduler,
              {{"cfs", HostSpec::Scheduler::cfs}, {"eevdf", HostSpec::Scheduler::eevdf}});
  s.read("sched_latency_ns", h.sched_latency_ns, 1, kMaxIntervalNs);
  s.read("sched_min_granularity_ns", h.sched_min_granularity_ns, 1, kMaxIntervalNs);
  s.read("sched_wakeup_granularity_ns", h.sched_wakeup_granularity_ns, 0, kMaxIntervalNs);
  s.read("sched_base_slice_ns", h.sched_base_slice_ns, 1, kMaxIntervalNs);
  s.read("tick_ns", h.tick_ns, kMinTickNs, kMaxIntervalNs);
  s.read("balance_interval_per_cpu_ns", h.balance_interval_per_cpu_ns, 1000, kMaxIntervalNs);
  s.read("balance_busy_factor", h.balance_busy_factor, 1, 1000);
  s.read("sched_migration_cost_ns", h.sched_migration_cost_ns, 0, kMaxIntervalNs);
  s.read("stress_threads", h.stress_threads, 0, 4096);
  s.read("housekeeping_interval_ns", h.housekeeping_interval_ns, 0, kMaxIntervalNs);
  s.read("housekeeping_ns", h.housekeeping_ns, 0, kMaxIntervalNs);
  s.read("ttwu_queue", h.ttwu_queue);
  s.read("next_buddy", h.next_buddy);
  if (const toml::table* t = s.subtable("kvm")) {
    Section k(s.reader(), *t, s.path_of("kvm"), "[host.kvm]");
    HostSpec::Kvm& v = h.kvm;
    k.read("pv_unhalt", v.pv_unhalt);
    k.read("steal_time", v.steal_time);
    k.read("kick_boost", v.kick_boost);
    k.read("yield_bailout_undercommit", v.yield_bailout_undercommit);
    k.read("irq_boost", v.irq_boost);
    k.read("irq_boost_user_mode", v.irq_boost_user_mode);
    k.read("in_kernel_check_preempted_only", v.in_kernel_check_preempted_only);
    k.read_enum("in_spin_loop_until", v.in_spin_loop_until,
                {{"spin_end", HostSpec::Kvm::SpinLoopMark::spin_end},
                 {"handler_end", HostSpec::Kvm::SpinLoopMark::handler_end}});
    k.read("ple", v.ple);
    k.read("ple_window", v.ple_window, 0, 1'000'000'000'000);
    k.read("ple_window_grow", v.ple_window_grow, 0, 1000);
    k.read("ple_window_max", v.ple_window_max, 0, 1'000'000'000'000);
    k.read_positive("cycles_per_ns", v.cycles_per_ns, 100);
    k.read("halt_poll_ns", v.halt_poll_ns, 0, kMaxIntervalNs);
    k.read("halt_poll_ns_grow", v.halt_poll_ns_grow, 0, 1000);
    k.read("halt_poll_ns_grow_start", v.halt_poll_ns_grow_start, 0, kMaxIntervalNs);
    k.read("halt_poll_ns_shrink", v.halt_poll_ns_shrink, 0, 1000);
    k.read("preempted_on_every_put", v.preempted_on_every_put);
    k.read("apicv", v.apicv);
    if (v.ple_window_max < v.ple_window)
      k.fail(t->contains("ple_window_max") ? "ple_window_max" : "ple_window",
             fmt::format("ple_window_max ({}) must be >= ple_window ({})", v.ple_window_max,
                         v.ple_window));
    k.finish();
  }
  s.finish();
}

void read_guest(Section& s, GuestSpec& g) {
  s.take("kernel");  // applied before the section is read (with_profile)
  if (const toml::node* n = s.take("lock")) {
    std::string name;
    s.read("lock", name);
    std::string valid = "auto";
    bool known = name == "auto";
    for (const LockInfo& i : lock_infos<NativeEnv>()) {
      valid += ", " + std::string(i.name);
      known = known || i.name == name;
    }
    // A kernel:* name may be a lock this build left out: say why (configure's reason).
    if (!known)
      s.fail("lock",
             "unknown lock '" + name + "'" +
                 (name.starts_with("kernel:") ? " (" + missing_lock_reason(name) + ")" : "") +
                 "; valid: " + valid);
    g.lock_name = name;
    (void)n;
  }
  for (const Knob& k : all_knobs()) {
    const toml::node* n = s.take(k.name);
    if (n == nullptr) continue;
    std::string value;
    if (const auto* i = n->as_integer())
      value = std::to_string(i->get());
    else if (const auto* b = n->as_boolean())
      value = b->get() ? "true" : "false";
    else if (const auto* str = n->as_string())
      value = unguard(str->get());
    else
      s.fail(k.name, "expected an integer, boolean or string (" + std::string(k.values) +
                         "), got " + std::string(type_name(*n)));
    // The knob's own setter, as apply_knob_assignment() would call it (calling that instead
    // trips GCC 12's -Wrestrict false positive, PR 105329, once inlined here).
    if (auto err = k.set(g.policies, value)) s.fail(k.name, *err);
  }
  s.read("vcpu_is_preempted_ns", g.vcpu_is_preempted_ns, 0, 1e6);
  s.read("pv_tlb_flush", g.pv_tlb_flush);
  s.read("pv_sched_yield", g.pv_sched_yield);
  s.read("nopvspin", g.nopvspin);
  s.read("realtime_hint", g.realtime_hint);
  s.read("tick_ns", g.tick_ns, kMinTickNs, kMaxIntervalNs);
  s.read("sched_min_granularity_ns", g.sched_min_granularity_ns, kMinTickNs, kMaxIntervalNs);
  s.read("sched_latency_ns", g.sched_latency_ns, kMinTickNs, kMaxIntervalNs);
  s.read("sched_wakeup_granularity_ns", g.sched_wakeup_granularity_ns, 0, kMaxIntervalNs);
  s.read_enum("preempt", g.preempt,
              {{"full", GuestSpec::Preempt::full}, {"none", GuestSpec::Preempt::none}});
  s.read_enum("scheduler", g.scheduler,
              {{"rr", GuestSpec::Scheduler::rr}, {"cfs", GuestSpec::Scheduler::cfs}});
  s.read("steal_time_accounting", g.steal_time_accounting);
  s.read_enum("wake_placement", g.wake_placement,
              {{"prev", GuestSpec::WakePlacement::prev},
               {"idle_cpu", GuestSpec::WakePlacement::idle_cpu},
               {"available_idle_cpu", GuestSpec::WakePlacement::available_idle_cpu}});
  s.finish();
}

Dist read_dist(const Reader& r, const toml::table& t, const std::string& path) {
  Section d(r, t, path, "a distribution table");
  d.require("dist");
  Dist out;
  d.read_enum("dist", out.kind,
              {{"const", Dist::Kind::constant},
               {"uniform", Dist::Kind::uniform},
               {"normal", Dist::Kind::normal},
               {"exp", Dist::Kind::exponential}});
  const double kMax = 1e12;
  switch (out.kind) {
    case Dist::Kind::constant:
    case Dist::Kind::exponential:
      d.require("mean");
      d.read("mean", out.mean, 0, kMax);
      break;
    case Dist::Kind::normal:
      d.require("mean");
      d.require("cv");
      d.read("mean", out.mean, 0, kMax);
      d.read("cv", out.cv, 0, 100);
      break;
    case Dist::Kind::uniform:
      d.require("min");
      d.require("max");
      d.read("min", out.min, 0, kMax);
      d.read("max", out.max, 0, kMax);
      if (out.max < out.min)
        d.fail("max", fmt::format("must be >= min ({}), got {}", out.min, out.max));
      out.mean = (out.min + out.max) / 2;
      break;
  }
  d.finish();
  return out;
}

void read_workload(Section& s, WorkloadSpec& w) {
  s.require("type");
  s.read("type", w.type);
  w.where = s.where_table();
  w.type_where = s.where("type");
  if (w.type == "program") {
    read_program(s, w);
    return;
  }
  for (const auto& [key, node] : s.table()) {
    const std::string raw(key.str());
    if (raw == "type") continue;
    s.take(raw);
    const std::string k = unguard(raw);
    const std::string path = s.path_of(k);
    Param p;
    p.where = s.reader().where(path, node.source());
    if (const auto* b = node.as_boolean()) {
      p.value = b->get();
    } else if (const auto* i = node.as_integer()) {
      p.value = i->get();
    } else if (const auto* f = node.as_floating_point()) {
      if (!std::isfinite(f->get()))
        fail_at(p.where, fmt::format("must be a finite number, got {}", f->get()));
      p.value = f->get();
    } else if (const auto* str = node.as_string()) {
      p.value = unguard(str->get());
    } else if (const auto* t = node.as_table()) {
      p.value = read_dist(s.reader(), *t, path);
    } else {
      fail_at(p.where, "expected a number, boolean, string or {dist = ...} table, got " +
                           std::string(type_name(node)));
    }
    w.params.emplace(k, std::move(p));
  }
  s.finish();
}

void read_vm(Section& s, VmSpec& v) {
  v.where = s.where_table();
  v.name.clear();
  s.read("name", v.name);
  for (char c : v.name)
    if (!is_key_char(c) || v.name.size() > 64)
      s.fail("name", "must be 1-64 characters from A-Z a-z 0-9 _ - . (got '" + v.name + "')");
  s.read("count", v.count, 1, 1024);
  s.require("vcpus");
  s.read("vcpus", v.vcpus, 1, 1024);
  s.read_enum("placement", v.placement,
              {{"floating", VmSpec::Placement::floating}, {"pinned", VmSpec::Placement::pinned}});
  if (const toml::table* g = s.subtable("guest")) {
    toml::table storage;
    const std::string path = s.path_of("guest");
    const toml::table& t = with_profile(s.reader(), *g, path, "[vm.guest]", eras::Side::guest,
                                        storage, v.guest.kernel);
    Section gs(s.reader(), t, path, "[vm.guest]");
    read_guest(gs, v.guest);
  }
  s.require("workload");
  if (const toml::table* w = s.subtable("workload")) {
    Section ws(s.reader(), *w, s.path_of("workload"), "[vm.workload]");
    read_workload(ws, v.workload);
  }
  s.finish();
}

}  // namespace pvlock::scenario::detail
