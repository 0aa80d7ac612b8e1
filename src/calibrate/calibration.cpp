// SPDX-License-Identifier: GPL-2.0-only
#include "calibrate/calibration.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "calibrate/microbench.hpp"

namespace pvlock::calibrate {
namespace {

std::string spread_comment(const Spread& s) {
  return fmt::format("median of {} samples; IQR {:.4g}-{:.4g}, min {:.4g}, max {:.4g}", s.reps,
                     s.p25, s.p75, s.min, s.max);
}

nlohmann::ordered_json opt_json(const std::optional<Spread>& s) {
  return s ? to_json(*s) : nlohmann::ordered_json(nullptr);
}

std::optional<Spread> opt_spread(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return spread_from_json(j.at(key));
}

}  // namespace

std::int64_t Calibration::tick_ns() const {
  if (kernel.config_hz && *kernel.config_hz > 0) return 1'000'000'000 / *kernel.config_hz;
  return static_cast<std::int64_t>(std::llround(tick_interval_ns.median));
}

std::int64_t Calibration::slice_ns_value() const {
  if (kernel.debugfs_slice_ns) return *kernel.debugfs_slice_ns;
  // The kernel's default (sched_init_granularity() -> update_sysctl()): 0.75 ms for EEVDF's
  // base slice, 0.75 ms for CFS's minimum granularity, both scaled by 1 + ilog2(CPUs), CPUs
  // capped at 8 (SCHED_TUNABLESCALING_LOG).
  int cpus = std::min(8, static_cast<int>(std::max<std::size_t>(1, topology.cpus.size())));
  int factor = 1;
  while (cpus > 1) {
    cpus >>= 1;
    ++factor;
  }
  return 750'000LL * factor;
}

std::string Calibration::slice_source() const {
  return kernel.debugfs_slice_ns ? "read from /sys/kernel/debug/sched"
                                 : "kernel default 0.75 ms x (1 + ilog2(CPUs)); debugfs not "
                                   "readable";
}

std::int64_t steal_noise_burst_ns(double fraction) {
  if (!(fraction > 0)) return 0;
  return static_cast<std::int64_t>(
      std::llround(std::min(fraction, 0.9) * static_cast<double>(kStealNoiseIntervalNs)));
}

Calibration run_calibration(const CalibrateOptions& o,
                            const std::function<void(const std::string&)>& progress) {
  const auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  const auto start = std::chrono::steady_clock::now();
  BenchSize z;
  if (o.quick) {
    z.reps = 5;
    z.scale = 1;
    z.window_s = 0.25;
  } else {
    z.reps = 15;
    z.scale = 2;
    z.window_s = 1.0;
  }
  Calibration c;
  const CpuTimes t0 = read_cpu_times();
  c.topology = read_topology();
  c.kernel = read_kernel_facts();
  say(fmt::format("topology: {} CPUs = {} socket(s) x {} core(s) x {} thread(s); kernel {} ({})",
                  c.topology.cpus.size(), c.topology.sockets, c.topology.cores_per_socket,
                  c.topology.threads_per_core, c.kernel.release, c.kernel.scheduler));
  const int cpu0 = c.topology.cpus.front().cpu;
  const auto report = [&](const char* what, const Spread& s) {
    say(fmt::format("{}: {}", what, describe(s, "ns")));
  };
  c.l1_hit_ns = measure_l1_hit_ns(z);
  report("L1 hit", c.l1_hit_ns);
  c.atomic_rmw_ns = measure_atomic_rmw_ns(z);
  report("uncontended atomic RMW", c.atomic_rmw_ns);
  c.pause_ns = measure_pause_ns(z);
  report("PAUSE", c.pause_ns);
  const auto transfer = [&](const char* what, std::optional<CpuPair> pair,
                            std::optional<Spread>& out) {
    if (!pair) {
      say(fmt::format("line transfer, {}: no such CPU pair on this machine", what));
      return;
    }
    out = measure_line_transfer_ns(z, *pair);
    say(fmt::format("line transfer, {} (CPUs {} and {}): {}", what, pair->a, pair->b,
                    describe(*out, "ns")));
  };
  transfer("SMT siblings", smt_pair(c.topology), c.xfer_smt_ns);
  transfer("cores of a socket", socket_pair(c.topology), c.xfer_socket_ns);
  transfer("sockets", remote_pair(c.topology), c.xfer_remote_ns);

  // Wake-ups and switches want two CPUs; on a one-CPU machine both ends share it.
  const int cpu1 = c.topology.cpus.size() > 1 ? c.topology.cpus[1].cpu : cpu0;
  const FutexWake fw = measure_futex_wake(z, CpuPair{cpu0, cpu1});
  c.futex_wake_to_run_ns = fw.wake_to_run_ns;
  c.futex_waker_ns = fw.waker_ns;
  c.syscall_ns = fw.syscall_ns;
  report("futex wake-to-run (idle CPU)", c.futex_wake_to_run_ns);
  report("futex wake, waker's system call", c.futex_waker_ns);
  report("system call (FUTEX_WAKE, nobody waiting)", c.syscall_ns);
  c.context_switch_ns = measure_context_switch_ns(z, cpu0);
  report("context switch (futex hand-off on one CPU)", c.context_switch_ns);
  const TickGaps tick = measure_tick(z, cpu0);
  c.tick_interval_ns = tick.interval_ns;
  c.tick_gap_ns = tick.gap_ns;
  report("interruptions of a busy thread, interval", c.tick_interval_ns);
  report("interruptions of a busy thread, length", c.tick_gap_ns);
  if (c.kernel.config_hz)
    say(fmt::format("CONFIG_HZ={} ({})", *c.kernel.config_hz, c.kernel.config_source));
  c.slice_ns = measure_slice_ns(z, cpu0);
  report("slice of a CPU-bound thread (two share a CPU)", c.slice_ns);
  if (c.kernel.debugfs_slice_ns)
    say(fmt::format("debugfs slice: {} ns", *c.kernel.debugfs_slice_ns));
  else
    say("debugfs sched tunables: not readable (/sys/kernel/debug/sched)");
  c.steal_fraction = steal_fraction(t0, read_cpu_times());
  c.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  say(fmt::format("steal during calibration: {:.1f}% of CPU time ({:.1f} s)",
                  100 * c.steal_fraction, c.elapsed_s));
  return c;
}

nlohmann::ordered_json to_json(const Calibration& c) {
  nlohmann::ordered_json cpus = nlohmann::ordered_json::array();
  for (const CpuTopo& t : c.topology.cpus)
    cpus.push_back(
        {{"cpu", t.cpu}, {"package", t.package}, {"core", t.core}, {"siblings", t.siblings}});
  nlohmann::ordered_json tunables = nlohmann::ordered_json::object();
  for (const auto& [k, v] : c.kernel.sched_tunables) tunables[k] = v;
  nlohmann::ordered_json j;
  j["topology"] = {{"sockets", c.topology.sockets},
                   {"cores_per_socket", c.topology.cores_per_socket},
                   {"threads_per_core", c.topology.threads_per_core},
                   {"uniform", c.topology.uniform},
                   {"cpus", cpus}};
  j["kernel"] = {{"release", c.kernel.release},
                 {"scheduler", c.kernel.scheduler},
                 {"config_hz", c.kernel.config_hz ? nlohmann::ordered_json(*c.kernel.config_hz)
                                                  : nlohmann::ordered_json(nullptr)},
                 {"config_source", c.kernel.config_source},
                 {"debugfs_slice_ns", c.kernel.debugfs_slice_ns
                                          ? nlohmann::ordered_json(*c.kernel.debugfs_slice_ns)
                                          : nlohmann::ordered_json(nullptr)},
                 {"sched_tunables", tunables}};
  j["measured_ns"] = {{"l1_hit", to_json(c.l1_hit_ns)},
                      {"atomic_rmw", to_json(c.atomic_rmw_ns)},
                      {"pause", to_json(c.pause_ns)},
                      {"xfer_smt", opt_json(c.xfer_smt_ns)},
                      {"xfer_socket", opt_json(c.xfer_socket_ns)},
                      {"xfer_remote", opt_json(c.xfer_remote_ns)},
                      {"futex_wake_to_run", to_json(c.futex_wake_to_run_ns)},
                      {"futex_waker", to_json(c.futex_waker_ns)},
                      {"syscall", to_json(c.syscall_ns)},
                      {"context_switch", to_json(c.context_switch_ns)},
                      {"tick_interval", to_json(c.tick_interval_ns)},
                      {"tick_gap", to_json(c.tick_gap_ns)},
                      {"slice", to_json(c.slice_ns)}};
  j["stated_ns"] = {
      {"tick", c.tick_ns()}, {"slice", c.slice_ns_value()}, {"slice_source", c.slice_source()}};
  j["steal_fraction"] = c.steal_fraction;
  j["elapsed_s"] = c.elapsed_s;
  return j;
}

Calibration calibration_from_json(const nlohmann::json& j) {
  try {
    Calibration c;
    const auto& t = j.at("topology");
    c.topology.sockets = t.at("sockets").get<int>();
    c.topology.cores_per_socket = t.at("cores_per_socket").get<int>();
    c.topology.threads_per_core = t.at("threads_per_core").get<int>();
    c.topology.uniform = t.at("uniform").get<bool>();
    for (const auto& cpu : t.at("cpus"))
      c.topology.cpus.push_back(CpuTopo{cpu.at("cpu").get<int>(), cpu.at("package").get<int>(),
                                        cpu.at("core").get<int>(),
                                        cpu.at("siblings").get<std::vector<int>>()});
    if (c.topology.cpus.empty()) throw std::runtime_error("topology.cpus: empty");
    const auto& k = j.at("kernel");
    c.kernel.release = k.at("release").get<std::string>();
    c.kernel.scheduler = k.at("scheduler").get<std::string>();
    if (c.kernel.scheduler != "cfs" && c.kernel.scheduler != "eevdf")
      throw std::runtime_error("kernel.scheduler: expected \"cfs\" or \"eevdf\"");
    if (!k.at("config_hz").is_null()) c.kernel.config_hz = k.at("config_hz").get<int>();
    c.kernel.config_source = k.at("config_source").get<std::string>();
    if (!k.at("debugfs_slice_ns").is_null())
      c.kernel.debugfs_slice_ns = k.at("debugfs_slice_ns").get<std::int64_t>();
    for (const auto& [key, v] : k.at("sched_tunables").items())
      c.kernel.sched_tunables[key] = v.get<std::string>();
    const auto& m = j.at("measured_ns");
    c.l1_hit_ns = spread_from_json(m.at("l1_hit"));
    c.atomic_rmw_ns = spread_from_json(m.at("atomic_rmw"));
    c.pause_ns = spread_from_json(m.at("pause"));
    c.xfer_smt_ns = opt_spread(m, "xfer_smt");
    c.xfer_socket_ns = opt_spread(m, "xfer_socket");
    c.xfer_remote_ns = opt_spread(m, "xfer_remote");
    c.futex_wake_to_run_ns = spread_from_json(m.at("futex_wake_to_run"));
    c.futex_waker_ns = spread_from_json(m.at("futex_waker"));
    c.syscall_ns = spread_from_json(m.at("syscall"));
    c.context_switch_ns = spread_from_json(m.at("context_switch"));
    c.tick_interval_ns = spread_from_json(m.at("tick_interval"));
    c.tick_gap_ns = spread_from_json(m.at("tick_gap"));
    c.slice_ns = spread_from_json(m.at("slice"));
    c.steal_fraction = j.at("steal_fraction").get<double>();
    c.elapsed_s = j.at("elapsed_s").get<double>();
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not a pvlock calibration: ") + e.what());
  }
}

std::string to_toml(const Calibration& c, bool steal_as_noise) {
  std::string out;
  const auto line = [&](const std::string& s) { out += s + "\n"; };
  const auto cost = [&](const char* key, const Spread& s, const char* what) {
    line(fmt::format("{} = {:.4g}  # {}: {}", key, s.median, what, spread_comment(s)));
  };
  line("# pvlock calibrate: this machine as a scenario fragment (measured, not estimated).");
  line(fmt::format("# kernel {} ({}), {} CPUs, calibration took {:.1f} s, steal {:.1f}%.",
                   c.kernel.release, c.kernel.scheduler, c.topology.cpus.size(), c.elapsed_s,
                   100 * c.steal_fraction));
  line("# Costs nothing here measures (VM exits, posted interrupts) keep their defaults.");
  line("");
  line("[machine]");
  if (!c.topology.uniform)
    line("# the CPUs do not form sockets x cores x threads; the nearest description:");
  line(fmt::format("sockets = {}", c.topology.sockets));
  line(fmt::format("cores_per_socket = {}", c.topology.cores_per_socket));
  line(fmt::format("threads_per_core = {}", c.topology.threads_per_core));
  line("");
  line("[costs]");
  cost("pause_ns", c.pause_ns, "one PAUSE");
  cost("l1_hit_ns", c.l1_hit_ns, "dependent load, 4 KiB working set");
  cost("atomic_local_ns", c.atomic_rmw_ns, "lock xadd on an owned line");
  if (c.xfer_smt_ns)
    cost("xfer_smt_ns", *c.xfer_smt_ns, "ping-pong, SMT siblings");
  else
    line("# xfer_smt_ns: no SMT siblings on this machine");
  if (c.xfer_socket_ns)
    cost("xfer_socket_ns", *c.xfer_socket_ns, "ping-pong, cores of a socket");
  else
    line("# xfer_socket_ns: no two cores share a socket");
  if (c.xfer_remote_ns)
    cost("xfer_remote_ns", *c.xfer_remote_ns, "ping-pong, two sockets");
  else
    line("# xfer_remote_ns: one socket");
  cost("guest_ctx_switch_ns", c.context_switch_ns,
       "thread switch on one CPU, futex wait + wake included");
  line("# This machine as a host: its threads are what vCPU threads are to KVM.");
  cost("vcpu_switch_ns", c.context_switch_ns, "the same switch, between the host's threads");
  cost("host_wake_idle_ns", c.futex_wake_to_run_ns, "FUTEX_WAKE -> sleeper runs, idle CPU");
  line(fmt::format("# futex wake, waker's system call: {:.4g} ns ({})", c.futex_waker_ns.median,
                   spread_comment(c.futex_waker_ns)));
  line(fmt::format("# bare system call (FUTEX_WAKE, nobody waiting): {:.4g} ns ({})",
                   c.syscall_ns.median, spread_comment(c.syscall_ns)));
  line("");
  line("[host]");
  line(fmt::format("scheduler = \"{}\"  # kernel {}", c.kernel.scheduler, c.kernel.release));
  line(fmt::format(
      "tick_ns = {}  # {}; interruptions of a busy thread every {:.4g} ns ({})", c.tick_ns(),
      c.kernel.config_hz
          ? fmt::format("CONFIG_HZ={} from {}", *c.kernel.config_hz, c.kernel.config_source)
          : std::string("kernel config not readable: measured"),
      c.tick_interval_ns.median, spread_comment(c.tick_interval_ns)));
  line(fmt::format(
      "{} = {}  # {}; a CPU-bound thread sharing its CPU runs {:.4g} ns ({}): "
      "the slice rounded up to the tick",
      c.kernel.scheduler == "eevdf" ? "sched_base_slice_ns" : "sched_min_granularity_ns",
      c.slice_ns_value(), c.slice_source(), c.slice_ns.median, spread_comment(c.slice_ns)));
  if (steal_as_noise) {
    line(fmt::format(
        "# the {:.2f}% steal seen while calibrating, as host housekeeping taking that share of "
        "every CPU",
        100 * c.steal_fraction));
    line(fmt::format("housekeeping_interval_ns = {}", kStealNoiseIntervalNs));
    line(fmt::format("housekeeping_ns = {}", steal_noise_burst_ns(c.steal_fraction)));
  } else {
    line("# no host housekeeping: the tick's own cost is in the measured slice and tick gaps");
    line("housekeeping_ns = 0");
  }
  return out;
}

}  // namespace pvlock::calibrate
