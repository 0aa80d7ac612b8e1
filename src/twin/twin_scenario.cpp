// SPDX-License-Identifier: GPL-2.0-only
#include "twin/twin_scenario.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "scenario/parse.hpp"

namespace pvlock::twin {

TwinScenarioText twin_scenario_text(const calibrate::Calibration& cal, const TwinLock& lock,
                                    int threads, const TwinWorkload& w, const SimSettings& s) {
  TwinScenarioText out;
  std::string& t = out.toml;
  t += calibrate::to_toml(cal, s.steal_as_noise);
  t += fmt::format(
      "\n[run]\nduration_ms = {}\nwarmup_ms = {}\nseed = {}\n"
      // A convoy behind a preempted lock holder or waiter is the result under measurement,
      // not a liveness failure: natively nothing stops it either.
      "watchdog_ms = 0\n",
      s.duration_ms, s.warmup_ms, s.seed);
  t += "\n[host.kvm]\n";
  t += "pv_unhalt = true        # pv_wait/pv_kick: FUTEX_WAIT/FUTEX_WAKE\n";
  t += "steal_time = false      # vcpu_is_preempted() is false for a thread\n";
  t += "ple = false             # a spinning thread's PAUSE never exits\n";
  t += "halt_poll_ns = 0        # FUTEX_WAIT sleeps at once\n";
  t += "kick_boost = false\nirq_boost = false\napicv = true\n";
  if (s.background_threads > 0)
    out.overrides.push_back(fmt::format("host.stress_threads={}", s.background_threads));
  t += fmt::format(
      "\n[[vm]]\nname = \"threads\"\nvcpus = {}\nplacement = \"floating\"\n\n[vm.guest]\nlock = "
      "\"{}\"\n",
      threads, lock.sim);
  for (const std::string& k : lock.knobs) {
    const auto eq = k.find('=');
    t += fmt::format("{} = {}\n", k.substr(0, eq), k.substr(eq + 1));
  }
  // A one-task guest's own tick only costs time; a thread has no such interrupt (the host's
  // tick is the machine's). The longest tick the parser allows keeps it out of the window.
  t += "tick_ns = 10000000000\n";
  t += fmt::format(
      "\n[vm.workload]\ntype = \"lockloop\"\ntasks_per_vcpu = 1\ncompute_ns = {}\nhold_ns = {}\n",
      w.outside_ns, w.cs_ns);

  // Costs of the KVM paths the native mechanisms take instead (the fragment's [costs] hold
  // what the microbenchmarks measured; these map them onto the exits a vCPU would take).
  const double syscall = cal.syscall_ns.median;
  const double waker = std::max(cal.futex_waker_ns.median, syscall);
  const auto set = [&](const char* key, double v) {
    out.overrides.push_back(fmt::format("costs.{}={:.4g}", key, std::max(0.0, v)));
  };
  set("hlt_exit_ns", syscall);  // pv_wait: the FUTEX_WAIT system call before sleeping
  set("vmexit_ns", syscall);    // any other exit: a system call round trip
  set("hypercall_ns", waker);   // pv_kick: the FUTEX_WAKE system call, a sleeper present
  set("kick_send_ns", 0);       //   (all of it in hypercall_ns)
  set("ipi_send_ns", 0);        // wake_up_process of a sleeping thread: FUTEX_WAKE, charged
  set("guest_wake_ns", waker);  //   as the guest's wake-up; no interrupt is sent
  set("ipi_handle_ns", 0);      // nor handled: the woken thread returns from FUTEX_WAIT
  set("host_wake_polling_ns", cal.futex_wake_to_run_ns.median);  // no polling: as idle
  // A one-task guest switching from its idle loop back to the task: for a thread that is the
  // return from FUTEX_WAIT, already inside the measured wake-to-run latency.
  set("guest_ctx_switch_ns", 0);
  return out;
}

scenario::Scenario twin_scenario(const calibrate::Calibration& cal, const TwinLock& lock,
                                 int threads, const TwinWorkload& w, const SimSettings& s) {
  const TwinScenarioText text = twin_scenario_text(cal, lock, threads, w, s);
  return scenario::parse_scenario(text.toml, fmt::format("twin-{}-{}", lock.native, threads),
                                  text.overrides);
}

}  // namespace pvlock::twin
