// SPDX-License-Identifier: GPL-2.0-only
#include "harness/run.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>

#include "harness/progress.hpp"
#include "harness/series.hpp"
#include "output/counters_json.hpp"
#include "output/lockstat_json.hpp"
#include "pvlock/lock/registry.hpp"
#include "sim/guest/guest.hpp"
#include "sim/guest/sim_env.hpp"
#include "sim/host/kvm_platform.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::harness {

using namespace pvlock::sim;  // the harness drives the simulator's types throughout

std::string resolve_lock_name(const scenario::GuestSpec& g, bool host_pv_unhalt) {
  std::string name = g.lock_name;
  // The kernel's choice (kvm_spinlock_init): PV qspinlock when the host can unhalt, unless
  // nopvspin or the dedicated-pCPU hint ask for the native one.
  if (name == "auto")
    name = host_pv_unhalt && !g.nopvspin && !g.realtime_hint ? "pvqspinlock" : "qspinlock";
  bool known = false;
  std::string names;
  for (const LockInfo& i : lock_infos<SimEnv>()) {
    known = known || i.name == name;
    names += (names.empty() ? "" : ", ") + std::string(i.name);
  }
  if (!known)
    throw std::invalid_argument("guest lock '" + name + "' is not available; locks: " + names);
  return name;
}

namespace {

// The raw_spinlock_t kind the registry lock `name` is, if it is one a kernel boots with.
std::optional<RawSpinlockKind> raw_spinlock_of(std::string_view name) {
  for (const RawSpinlockKind k :
       {RawSpinlockKind::tas, RawSpinlockKind::ticket, RawSpinlockKind::mcs,
        RawSpinlockKind::qspinlock, RawSpinlockKind::pvqspinlock})
    if (name == raw_spinlock_kind_name(k)) return k;
  return std::nullopt;
}

}  // namespace

WaitLock resolve_wait_lock(const scenario::GuestSpec& g, const std::string& lock_name,
                           bool host_pv_unhalt) {
  if (g.policies.raw_spinlock != RawSpinlockKind::automatic)
    return {g.policies.raw_spinlock, g.policies.raw_spinlock_name, false};
  // A guest whose lock is a spinlock was built with it: its raw_spinlock_t is that lock.
  if (const auto own = raw_spinlock_of(lock_name)) return {*own, "", false};
  // So is a guest running the kernel's own spinlock code, when that code can be one (its
  // qspinlock and pvqspinlock; not its OSQ, which no kernel boots as raw_spinlock_t).
  if (lock_name.starts_with("kernel:")) {
    LockPolicies p;
    p.raw_spinlock = RawSpinlockKind::external;
    p.raw_spinlock_name = lock_name;
    if (!resolve_raw_spinlock<SimEnv>(p).has_value())
      return {RawSpinlockKind::external, lock_name, false};
  }
  // Otherwise (a sleeping lock, the kernel's OSQ, a test lock) the kernel's choice at boot.
  scenario::GuestSpec boot = g;
  boot.lock_name = "auto";
  return {resolve_lock_name(boot, host_pv_unhalt) == "pvqspinlock" ? RawSpinlockKind::pvqspinlock
                                                                   : RawSpinlockKind::qspinlock,
          "", true};
}

double run_scenario(const scenario::Scenario& sc,
                    const std::function<void(Simulation&, std::vector<VmRun>&)>& inspect,
                    trace::Tracer* tracer,
                    const std::function<void(Simulation&, std::vector<VmRun>&)>& prepare) {
  if (sc.vms.empty()) throw std::invalid_argument("scenario has no VM / guest");
  if (sc.machine.cpus() > kMaxCpus)
    throw std::invalid_argument("at most " + std::to_string(kMaxCpus) + " CPUs are supported");
  // Declared first so that it is destroyed last: the guests' fibers unwind before the
  // workloads their programs belong to go away.
  std::vector<VmRun> vms;
  Simulation sim(sc, sc.bare_metal() ? nullptr : std::make_unique<KvmPlatform>(sc));
  for (const scenario::VmSpec& spec : sc.vms) {
    for (int k = 0; k < spec.count; ++k) {
      VmRun vm;
      // NAME + index, also for count = 1: a VM keeps its name when a sweep varies the
      // table's count, so the rows of `pvlock summarize` line up across the points. Bare
      // metal has one OS and no count: "machine".
      vm.name = sc.bare_metal() ? spec.name : spec.name + std::to_string(k);
      // Bare metal: one OS on every CPU of the machine.
      const int vcpus = sc.bare_metal() ? sc.machine.cpus() : spec.vcpus;
      vm.guest = &sim.add_guest(vm.name, spec.guest, vcpus);
      const bool pv_unhalt = sim.platform().pv_unhalt(*vm.guest);
      vm.guest->lock_name = resolve_lock_name(spec.guest, pv_unhalt);
      LockPolicies& pol = vm.guest->policies();
      const WaitLock wl = resolve_wait_lock(spec.guest, vm.guest->lock_name, pv_unhalt);
      // The wait_lock is the kernel's boot-time choice (not the guest's configured lock).
      const bool boot_wait_lock = wl.boot;
      pol.raw_spinlock = wl.kind;
      pol.raw_spinlock_name = wl.name;
      // A kernel:* wait_lock runs the kernel's code for SimEnv, in this guest's instance.
      if (auto err = resolve_raw_spinlock<SimEnv>(pol))
        throw std::invalid_argument("vm '" + vm.name + "' guest wait_lock " + *err);
      // kvm_spinlock_init(): a guest whose host offers no PV unhalt keeps virt_spin_lock_key
      // on, so its native qspinlock falls back to test-and-set (unless "dedicated" hints) --
      // the guest's spinlock when it is the kernel's choice, and the wait_lock of its
      // mutexes and rwsems when its lock is not a spinlock.
      if (!sc.bare_metal() && (spec.guest.lock_name == "auto" || boot_wait_lock) && !pv_unhalt &&
          !spec.guest.realtime_hint)
        pol.qspinlock.virt_spin_lock = true;
      vms.push_back(std::move(vm));
    }
  }
  // Workloads create their tasks once every guest exists.
  std::size_t i = 0;
  for (const scenario::VmSpec& spec : sc.vms)
    for (int k = 0; k < spec.count; ++k, ++i)
      vms[i].workload = workload::make_workload(spec.workload, *vms[i].guest);

  sim.set_tracer(tracer);
  if (prepare) prepare(sim, vms);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    sim.run();
  } catch (const Interrupted& e) {
    // A progress sampler stopped the run (harness/progress.hpp): what run() would have done
    // at its end, then the caller's inspection of the partial run, then on to the caller.
    for (auto& g : sim.guests()) g->finish_stats();
    if (tracer != nullptr) tracer->finish(e.at);
    inspect(sim, vms);
    throw;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  inspect(sim, vms);
  return wall;
}

namespace {

nlohmann::ordered_json profile_json(const Guest& g) {
  const Profile& p = const_cast<Guest&>(g).profile();
  // Several spin sites share a kernel symbol (queued_spin_lock_slowpath): merge by name,
  // keeping the fixed symbol order.
  std::vector<std::pair<std::string, double>> rows;
  double total = 0;
  for (int s = 0; s < kSymCount; ++s) {
    const double ns = p.ns[static_cast<std::size_t>(s)];
    total += ns;
    const std::string name(sym_name(static_cast<Sym>(s)));
    bool merged = false;
    for (auto& [n, v] : rows)
      if (n == name) {
        v += ns;
        merged = true;
      }
    if (!merged) rows.emplace_back(name, ns);
  }
  nlohmann::ordered_json j;
  j["total_ns"] = total;
  nlohmann::ordered_json sym = nlohmann::ordered_json::object();
  for (const auto& [n, v] : rows) {
    if (v <= 0) continue;
    sym[n] = {{"ns", v}, {"pct", total > 0 ? 100.0 * v / total : 0.0}};
  }
  j["symbols"] = sym;
  return j;
}

nlohmann::ordered_json host_json(const HostCounters& c, const Simulation& sim, int vcpus) {
  nlohmann::ordered_json h;
  // The scalar counters in their list's order, nested by their JSON pointers.
#define PVLOCK_HOST_COUNTER_JSON(field, type, pointer, meaning) \
  h[nlohmann::ordered_json::json_pointer(pointer)] = c.field;
  PVLOCK_HOST_COUNTERS(PVLOCK_HOST_COUNTER_JSON)
#undef PVLOCK_HOST_COUNTER_JSON
  const double window = static_cast<double>(sim.end_time() - sim.measure_start());
  // Mean over the vCPUs: the share of the window a vCPU spent runnable but not running.
  h["steal_pct"] =
      window > 0 && vcpus > 0 ? 100.0 * static_cast<double>(c.steal_ns) / (window * vcpus) : 0.0;
  nlohmann::ordered_json kick_entry;
  for (int i = 0; i < kKickPaths; ++i) {
    const HostCounters::KickEntry& e = c.kick_entry[i];
    kick_entry[kKickPathNames[i]] = {{"n", e.n}, {"ns", e.ns}, {"over_1ms", e.over_1ms}};
  }
  h["kick_to_entry"] = kick_entry;
  return h;
}

// Fault counters over the whole run (warm-up included: a fault then still matters).
nlohmann::ordered_json faults_json(const FaultCounters& c) {
  nlohmann::ordered_json j;
#define PVLOCK_X(field, type, meaning) j[#field] = c.field;
  PVLOCK_FAULT_COUNTERS(PVLOCK_X)
#undef PVLOCK_X
  return j;
}

}  // namespace

nlohmann::ordered_json run_to_json(const scenario::Scenario& sc, trace::Tracer* tracer,
                                   std::int64_t series_interval_ns,
                                   const ProgressOptions* progress) {
  nlohmann::ordered_json j;
  j["scenario"] = sc.name;
  j["seed"] = sc.run.seed;
  double wall = 0;
  std::uint64_t steps = 0;
  double cpu = 0, simulated_s = 0;
  int vcpus = 0;
  EventCounts counts;
  nlohmann::ordered_json by_kind = nlohmann::ordered_json::object();
  std::unique_ptr<SeriesRecorder> series;
  std::unique_ptr<Sampler> progress_sampler;
  const auto inspect = [&](Simulation& sim, std::vector<VmRun>& vms) {
    j["simulated_ns"] = sim.end_time();
    j["measured_ns"] = sim.end_time() - sim.measure_start();
    nlohmann::ordered_json vj = nlohmann::ordered_json::array();
    LockEventCounts total{};
    nlohmann::ordered_json prof = nlohmann::ordered_json::object();
    nlohmann::ordered_json lockstat = nlohmann::ordered_json::object();
    for (VmRun& vm : vms) {
      nlohmann::ordered_json v;
      v["name"] = vm.name;
      v["lock"] = vm.guest->lock_name;
      v["vcpus"] = vm.guest->vcpu_count();
      v["score"] = vm.workload->score();
      v["unit"] = vm.workload->unit();
      vm.workload->report(v);
      vj.push_back(v);
      total += vm.guest->counters();
      prof[vm.name] = profile_json(*vm.guest);
      lockstat[vm.name] = output::lockstat_json(vm.guest->lock_stats());
    }
    j["vms"] = vj;
    j["counters"] = output::counters_json(total);
    j["profile"] = prof;
    j["lockstat"] = lockstat;
    if (sc.faults.any()) j["faults"] = faults_json(sim.faults().counters());
    if (const auto& rep = sim.watchdog().report()) j["liveness"] = rep->json();
    if (const HostCounters* host = sim.platform().host_counters()) {
      j["host"] = host_json(*host, sim, sim.vcpu_count());
      for (std::size_t k = 0; k < vms.size(); ++k)
        j["vms"][k]["host"] = host_json(*sim.platform().guest_host_counters(static_cast<int>(k)),
                                        sim, vms[k].guest->vcpu_count());
    }
    counts = sim.event_counts();
    for (std::size_t k = 0; k < kEventKinds; ++k) {
      const auto kind = static_cast<EventKind>(k);
      if (kind == EventKind::host) continue;  // by sub-kind below
      if (counts.by_kind[k] != 0) by_kind[event_kind_name(kind)] = counts.by_kind[k];
    }
    for (std::size_t a = 0; a < kHostEventKinds; ++a)
      if (counts.host_by_arg[a] != 0)
        by_kind[sim.platform().event_name(static_cast<std::uint8_t>(a))] = counts.host_by_arg[a];
    simulated_s = static_cast<double>(sim.now()) * 1e-9;
    vcpus = sim.vcpu_count();
    steps = sim.inline_steps();
    cpu = sim.run_cpu_seconds();
    if (series) j["series"] = series->json();
  };
  const auto prepare = [&](Simulation& sim, std::vector<VmRun>& vms) {
    Sampler* sampler = nullptr;
    Time interval = 0;
    if (series_interval_ns > 0) {
      series = std::make_unique<SeriesRecorder>(sim, vms, series_interval_ns);
      sampler = series.get();
      interval = series_interval_ns;
    }
    // Progress looks at the run at the series' samples when there are any.
    if (progress != nullptr) {
      progress_sampler = make_progress_sampler(sim, *progress, sampler);
      sampler = progress_sampler.get();
      if (interval == 0) interval = progress_interval(sim.end_time());
    }
    if (sampler != nullptr) sim.set_sampler(sampler, interval);
  };
  wall = run_scenario(sc, inspect, tracer, prepare);
  // Speed: every dispatched event counts (engine/event_counts.hpp), stale ones apart; rates
  // per wall second and per CPU second of the simulating thread (the steadier one on a
  // shared machine). vCPU-seconds: simulated time times the vCPUs simulated.
  const std::uint64_t events = counts.dispatched();
  const auto per = [](double x, double s) { return s > 0 ? x / s : 0.0; };
  const double vcpu_s = simulated_s * vcpus;
  j["perf"] = {{"wall_s", wall},
               {"cpu_s", cpu},
               {"events", events},
               {"stale_events", counts.stale()},
               {"stale_resumes", counts.stale_resumes},
               {"stale_host_events", counts.stale_host},
               {"events_by_kind", by_kind},
               {"inline_steps", steps},
               {"simulated_s", simulated_s},
               {"vcpus", vcpus},
               {"events_per_s", per(static_cast<double>(events), wall)},
               {"events_per_cpu_s", per(static_cast<double>(events), cpu)},
               {"steps_per_s", per(static_cast<double>(events + steps), wall)},
               {"sim_s_per_wall_s", per(simulated_s, wall)},
               {"sim_s_per_cpu_s", per(simulated_s, cpu)},
               {"vcpu_s_per_wall_s", per(vcpu_s, wall)},
               {"vcpu_s_per_cpu_s", per(vcpu_s, cpu)}};
  return j;
}

}  // namespace pvlock::harness
