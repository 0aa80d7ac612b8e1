// SPDX-License-Identifier: GPL-2.0-only
// `pvlock torture`: locktorture-style stress of one lock (see native/torture.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "harness/sim_torture.hpp"
#include "native/torture.hpp"
#include "output/counters_json.hpp"
#include "output/torture_json.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/knobs.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"
#include "workload/torture.hpp"

namespace pvlock::cli {
namespace {

struct TortureArgs {
  std::string lock;
  std::string world = "native";
  int threads = -1;  // -1: the world's default (--threads absent)
  CLI::Option* threads_opt = nullptr;
  int readers = 0;
  double duration = 5.0;
  long long hold_ns = 0;
  long long seed = 1;
  bool json = false;
  std::vector<std::string> sets;
};

std::string rw_lock_names() {
  std::string names;
  for (const LockInfo& i : lock_infos<NativeEnv>())
    if (i.kind == LockKind::rw) names += (names.empty() ? "" : ", ") + std::string(i.name);
  return names;
}

// What --threads defaults to (native/torture.cpp: 2 x hardware threads).
int native_thread_count() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string lock_names() {
  std::string names;
  for (const LockInfo& i : lock_infos<NativeEnv>())
    names += (names.empty() ? "" : ", ") + std::string(i.name);
  return names;
}

nlohmann::ordered_json to_json(const native::TortureResult& r, const std::string& world) {
  nlohmann::ordered_json j;
  j["lock"] = r.lock;
  j["world"] = world;
  j["threads"] = r.threads;
  j["readers"] = r.readers;
  j["duration_s"] = r.duration_s;
  if (r.interrupted) j["interrupted"] = true;
  output::torture_outcome_json(j, r);
  j["counters"] = output::counters_json(r.counters);
  return j;
}

// A critical section too long for the run would make a healthy lock read as stuck: natively
// the threads could not stop before the harness gives up on them (and the run would last
// as long as one hold); simulated, nobody could acquire the lock in the last stretch of the
// run, which is how the simulated torture recognises a hang (workload/torture.cpp).
void check_hold(const TortureArgs& a) {
  const double hold_s = static_cast<double>(a.hold_ns) / 1e9;
  if (a.world == "sim") {
    const native::TortureOptions defaults;
    const double window_s =
        std::max(a.duration / 10, 3 * static_cast<double>(defaults.long_hold_ns) / 1e9);
    if (hold_s > window_s / 2)
      throw UsageError(fmt::format(
          "--hold-ns {}: a {} s critical section is too long for a {} s simulated run; the "
          "torture calls a run stuck when nobody acquires the lock in its last {} s, so a hold "
          "may be at most half of that ({} ns)",
          a.hold_ns, hold_s, a.duration, window_s, static_cast<long long>(window_s / 2 * 1e9)));
    return;
  }
  constexpr double kMaxNativeHoldS = 1.0;
  if (hold_s > std::min(a.duration, kMaxNativeHoldS))
    throw UsageError(fmt::format(
        "--hold-ns {}: a {} s critical section is longer than {}; the threads could not stop "
        "in time and a healthy lock would read as stuck",
        a.hold_ns, hold_s,
        a.duration < kMaxNativeHoldS ? fmt::format("the {} s run", a.duration)
                                     : std::string("1 s")));
}

// The simulated torture writes these keys of its scenario from flags; an override of one
// would silently contradict the flag (and the checks made on it, e.g. check_hold).
void reject_flag_override(const std::string& kv, std::string key) {
  key.erase(key.find_last_not_of(" \t") + 1);
  key.erase(0, key.find_first_not_of(" \t"));
  static constexpr std::pair<std::string_view, std::string_view> kFromFlags[] = {
      {"run.duration_ms", "--duration"},
      {"run.seed", "--seed"},
      {"guest.lock", "--lock"},
      {"workload.hold_ns", "--hold-ns"},
      {"workload.readers", "--readers"},
      {"machine.sockets", "--threads"},
      {"machine.cores_per_socket", "--threads"},
      {"machine.threads_per_core", "--threads"},
  };
  if (key == "workload.type")
    throw UsageError("--set " + kv + ": the simulated torture's workload is of type torture");
  for (const auto& [k, flag] : kFromFlags)
    if (key == k)
      throw UsageError(fmt::format("--set {}: torture --world sim sets {} from {}; use {}", kv, key,
                                   flag, flag));
  if (key.starts_with("guest.") && find_knob(key.substr(6)) != nullptr)
    throw UsageError(fmt::format("--set {}: a lock knob is set as --set {}", kv, kv.substr(6)));
}

void print_text(const native::TortureResult& r, const std::string& world, double requested_s) {
  fmt::print("{}-torture ({} writers, {} readers, {} s, {}):\n", r.lock, r.threads, r.readers,
             r.interrupted ? fmt::format("{:.3f} of {}", r.duration_s, requested_s)
                           : fmt::format("{}", r.duration_s),
             world);
  fmt::print("Writes:  Total: {}  Max/Min: {}/{} {}  Fail: {}\n", r.acquisitions, r.max_per_thread,
             r.min_per_thread, r.starvation ? "???" : "", r.violations);
  if (r.starvation)
    fmt::print(
        "  (???: locktorture's starvation mark -- the busiest writer took over twice the "
        "acquisitions of the least busy one; an unfair lock does that, and it is not a "
        "failure)\n");
  if (r.readers > 0) fmt::print("Reads :  Total: {}\n", r.read_acquisitions);
  fmt::print("Max wait: {:.3f} ms\n", static_cast<double>(r.max_wait_ns) / 1e6);
  std::string nonzero;
  for (std::size_t i = 0; i < kLockEventCount; ++i)
    if (r.counters.v[i] != 0) nonzero += fmt::format(" {}={}", kLockEventNames[i], r.counters.v[i]);
  if (!nonzero.empty()) fmt::print("Counters:{}\n", nonzero);
  if (r.stuck) fmt::print("!!! threads did not stop: a lock is stuck (lost wake-up?)\n");
  // Ctrl-C: the totals above cover the time it ran, and the verdict is of that time only.
  fmt::print("--- {}-torture: {}{}{}\n", r.lock, r.success() ? "SUCCESS" : "FAILURE",
             r.interrupted ? fmt::format(" so far (interrupted after {:.3f} of {} s)", r.duration_s,
                                         requested_s)
                           : "",
             r.success() ? "" : " !!!");
}

}  // namespace

namespace {
void register_torture(CLI::App& app, Action& action) {
  auto args = std::make_shared<TortureArgs>();
  auto* cmd = app.add_subcommand("torture", "locktorture-style stress test of one lock");
  cmd->add_option("--lock", args->lock, "Lock name (see `pvlock locks`)")->required();
  cmd->add_option("--world", args->world, "native (real threads) or sim (simulated machine)");
  args->threads_opt =
      cmd->add_option("--threads", args->threads,
                      "Writer threads, 1..512; with --world sim writers + readers <= 256 (the "
                      "simulated machine's CPUs) (default: 2 x hardware threads)");
  cmd->add_option("--readers", args->readers, "Reader threads, 0..512 (rw locks only: rwsem)");
  cmd->add_option("--duration", args->duration, "Seconds to run");
  cmd->add_option("--hold-ns", args->hold_ns, "Busy-wait inside each critical section (ns)");
  cmd->add_option("--seed", args->seed, "Random seed");
  cmd->add_option("--set", args->sets,
                  "Policy knob name=value (repeatable; see `pvlock locks`); with --world sim also "
                  "a scenario override key.path=value as `pvlock run --set` takes it, e.g. "
                  "faults.drop_kick=0.01, workload.irqs_off=true, run.watchdog_ms=50");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->callback([args, &action] {
    action = [args] {
      const TortureArgs& a = *args;
      const LockInfo* info = nullptr;
      const auto infos = lock_infos<NativeEnv>();
      for (const LockInfo& i : infos)
        if (i.name == a.lock) info = &i;
      if (info == nullptr)
        throw UsageError("unknown lock '" + a.lock + "'; valid locks: " + lock_names());
      if (a.world != "native" && a.world != "sim")
        throw UsageError("--world: '" + a.world + "' is not available; valid: native, sim");
      // An explicit --threads -1 is bad input, not a request for the default.
      if (a.threads_opt->count() > 0 && (a.threads < 1 || a.threads > 512))
        throw UsageError("--threads: must be between 1 and 512, got " + std::to_string(a.threads));
      if (a.readers < 0 || a.readers > 512)
        throw UsageError("--readers: must be between 0 and 512, got " + std::to_string(a.readers));
      if (a.readers > 0 && info->kind != LockKind::rw)
        throw UsageError(
            fmt::format("--readers {}: lock '{}' has no read side; readers need an rw lock ({})",
                        a.readers, a.lock, rw_lock_names()));
      constexpr int kSimCpus = 256;  // the simulated machine's limit
      // As the worlds default: 2 x hardware threads natively, one simulated writer.
      const int writers =
          a.threads > 0 ? a.threads : (a.world == "sim" ? 1 : 2 * native_thread_count());
      if (a.world == "sim" && writers + a.readers > kSimCpus)
        throw UsageError(fmt::format(
            "--threads/--readers: --world sim runs each thread on its own simulated CPU, at "
            "most {}; got {} writers + {} readers",
            kSimCpus, writers, a.readers));
      // busted is the negative control: with one writer nothing can race, so its SUCCESS
      // would say nothing.
      if (info->negative_control && writers < 2)
        throw UsageError("--threads 1: '" + a.lock +
                         "' is the control that must fail, and one writer cannot race; use "
                         "--threads 2 or more");
      if (!(a.duration > 0) || a.duration > 86400)
        throw UsageError(
            fmt::format("--duration: must be > 0 and <= 86400 seconds, got {}", a.duration));
      if (a.hold_ns < 0)
        throw UsageError(fmt::format("--hold-ns: must be >= 0, got {}", a.hold_ns));
      if (a.seed < 0) throw UsageError(fmt::format("--seed: must be >= 0, got {}", a.seed));
      check_hold(a);
      native::TortureOptions o;
      o.lock = a.lock;
      o.threads = a.threads < 0 ? 0 : a.threads;
      o.readers = a.readers;
      o.duration_s = a.duration;
      o.hold_ns = a.hold_ns;
      o.seed = static_cast<std::uint64_t>(a.seed);
      // A plain name is a lock knob; a key path (faults.drop_kick, workload.irqs_off)
      // overrides the simulated (bare-metal) scenario, which the native world does not have.
      std::vector<std::string> overrides;
      for (const std::string& kv : a.sets) {
        const std::string key = kv.substr(0, kv.find('='));
        if (kv.find('=') == std::string::npos || key.empty())
          throw UsageError(fmt::format("--set {}: expected name=value", kv));
        if (key.find_first_of(".[") != std::string::npos) {
          if (a.world != "sim")
            throw UsageError("--set " + kv +
                             ": a scenario override (key.path=value) needs --world sim");
          reject_flag_override(kv, key);
          overrides.push_back(kv);
        } else if (auto err = apply_knob_assignment(o.policies, kv)) {
          throw UsageError("--set: " + *err);
        } else if (std::find(info->knobs.begin(), info->knobs.end(), key) == info->knobs.end()) {
          std::string knobs;
          for (std::string_view k : info->knobs)
            knobs += (knobs.empty() ? "" : ", ") + std::string(k);
          throw UsageError(fmt::format("--set {}: lock '{}' does not use knob '{}'; {}", kv, a.lock,
                                       key,
                                       knobs.empty() ? "it has no knobs" : "its knobs: " + knobs));
        }
      }
      // A kernel:* wait_lock runs the kernel's code on threads (the simulated world resolves
      // it per guest).
      if (a.world != "sim")
        if (auto err = resolve_raw_spinlock<NativeEnv>(o.policies))
          throw UsageError("--set wait_lock: " + *err);
      // --world sim: a bare-metal simulated machine, --duration in simulated seconds.
      native::TortureResult r;
      // Ctrl-C ends the run early (natively in wall time, simulated at the simulation's next
      // sample) with the totals and the verdict so far.
      catch_interrupt();
      o.cancel = &interrupt_flag();
      try {
        r = a.world == "sim" ? harness::run_sim_torture(o, overrides) : native::run_torture(o);
      } catch (const scenario::ScenarioError& e) {
        throw UsageError(e.what());
      }
      if (a.json)
        fmt::print("{}\n", to_json(r, a.world).dump(2));
      else
        print_text(r, a.world, a.duration);
      std::fflush(stdout);
      if (!r.liveness.empty()) fmt::print(stderr, "{}", r.liveness);
      // Stuck workers cannot be joined: leave without running static destructors.
      if (r.stuck) std::_Exit(kExitStuck);
      if (!r.success()) return kExitFailed;
      return r.interrupted ? kExitInterrupted : kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{20, register_torture};

}  // namespace pvlock::cli
