// SPDX-License-Identifier: GPL-2.0-only
#include "reproduce/explain.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <utility>
#include <vector>

namespace pvlock::reproduce {
namespace {

double num(const nlohmann::ordered_json& j, const char* key) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0;
}

// 12345678 -> "12.3M", 4321 -> "4.3k".
std::string si(double v) {
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

// The profile summed over the VMs: the three largest executed symbols (shares of executed
// time, as `profile:` metrics count them) and the halted share of all vCPU time.
std::string profile_line(const nlohmann::ordered_json& run) {
  if (!run.contains("profile")) return {};
  std::vector<std::pair<std::string, double>> syms;
  double total = 0, unsampled = 0;
  for (const auto& [vm, prof] : run.at("profile").items()) {
    total += num(prof, "total_ns");
    for (const auto& [name, s] : prof.at("symbols").items()) {
      const double ns = num(s, "ns");
      if (name == "idle" || name == "pv_wait_halted") {
        unsampled += ns;
        continue;
      }
      auto it =
          std::find_if(syms.begin(), syms.end(), [&](const auto& p) { return p.first == name; });
      if (it == syms.end())
        syms.emplace_back(name, ns);
      else
        it->second += ns;
    }
  }
  const double executed = total - unsampled;
  if (total <= 0 || executed <= 0) return {};
  std::stable_sort(syms.begin(), syms.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out =
      fmt::format("halted/idle {:.0f}% of vCPU time; executed:", 100 * unsampled / total);
  for (std::size_t i = 0; i < std::min<std::size_t>(3, syms.size()); ++i)
    out += fmt::format(" {} {:.0f}%", syms[i].first, 100 * syms[i].second / executed);
  return out;
}

// Where the host put woken vCPUs, and for those that had to wait, how long and what ended
// the wait (the host half of the kick-to-run latency).
// Kick-time yields (seed 001's boost): how many went through, what stopped the others, and
// how often the kicker lost its own pCPU with one.
std::string kick_yields_part(const nlohmann::ordered_json& k, double secs) {
  const double tried = num(k, "tried"), done = num(k, "done");
  std::string out =
      fmt::format("kick yields {}/s of {}/s tried", si(done / secs), si(tried / secs));
  if (!k.contains("lost_to_ttwu_queue")) return out;  // older results lack the outcomes
  auto pct = [&](double x, double of) { return of > 0 ? 100.0 * x / of : 0.0; };
  out += fmt::format(
      " (lost to TTWU_QUEUE {:.0f}%, both run queues single {:.0f}%, refused {:.0f}%; of those "
      "done, onto the kicker's pCPU {:.0f}%, to a vCPU the kick switched in {:.0f}%, kicker "
      "descheduled {:.0f}%",
      pct(num(k, "lost_to_ttwu_queue"), tried), pct(num(k, "both_single"), tried),
      pct(num(k, "refused"), tried), pct(num(k, "onto_kicker_pcpu"), done),
      pct(num(k, "to_switching_in"), done), pct(num(k, "kicker_descheduled"), done));
  // Yields after which the head still waited (its pCPU ran another thread); newer results.
  if (k.contains("target_left_waiting"))
    out += fmt::format(", head left waiting {:.0f}%", pct(num(k, "target_left_waiting"), done));
  out += ")";
  return out;
}

// From a kick to the kicked vCPU's guest entry, by where the kick found it (the host's share
// of kick->run): mean, share of the kicks, and how many waited a millisecond or more.
std::string kick_entry_part(const nlohmann::ordered_json& k) {
  static constexpr std::pair<const char*, const char*> kPaths[] = {
      {"on_cpu", "on its pCPU"},
      {"queued", "woken, queued"},
      {"queued_yielded", "woken, queued, yielded to"},
      {"runnable", "already runnable"},
      {"runnable_yielded", "already runnable, yielded to"}};
  double all = 0;
  for (const auto& [key, label] : kPaths)
    if (k.contains(key)) all += num(k.at(key), "n");
  if (all <= 0) return {};
  std::vector<std::string> parts;
  for (const auto& [key, label] : kPaths) {
    if (!k.contains(key)) continue;
    const auto& e = k.at(key);
    const double n = num(e, "n");
    if (n <= 0) continue;
    parts.push_back(fmt::format("{} {:.0f}% {:.1f} us ({:.0f}% >= 1 ms)", label, 100 * n / all,
                                num(e, "ns") / n / 1e3, 100 * num(e, "over_1ms") / n));
  }
  std::string out = "kick->entry: ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? ", " : "") + parts[i];
  return out;
}

std::string wakeups_part(const nlohmann::ordered_json& w, double secs) {
  const double idle = num(w, "onto_idle"), pre = num(w, "preempting"), queued = num(w, "queued");
  const double all = idle + pre + queued;
  if (all <= 0) return {};
  std::string out = fmt::format(
      "vCPU wake-ups {}/s: {:.0f}% onto an idle pCPU, {:.0f}% preempting, {:.0f}% queued",
      si(all / secs), 100 * idle / all, 100 * pre / all, 100 * queued / all);
  const double ran = num(w, "queued_ran");
  if (ran > 0 && w.contains("queued_ended_by")) {
    const auto& by = w.at("queued_ended_by");
    out += fmt::format(" (wait {:.1f} us; ended by a yield {:.0f}%, block {:.0f}%, tick {:.0f}%)",
                       num(w, "queued_wait_ns") / ran / 1e3, 100 * num(by, "yield") / ran,
                       100 * num(by, "block") / ran, 100 * num(by, "tick") / ran);
  }
  return out;
}

// One profile symbol's CPU time, summed over the VMs (0 without a profile).
double symbol_ns(const nlohmann::ordered_json& run, const char* symbol) {
  double ns = 0;
  if (!run.contains("profile")) return ns;
  for (const auto& [vm, prof] : run.at("profile").items())
    if (prof.contains("symbols") && prof.at("symbols").contains(symbol))
      ns += num(prof.at("symbols").at(symbol), "ns");
  return ns;
}

std::string host_and_locks_line(const nlohmann::ordered_json& run) {
  const double secs = num(run, "measured_ns") / 1e9;
  if (secs <= 0) return {};
  std::vector<std::string> parts;
  if (run.contains("host")) {
    const auto& h = run.at("host");
    parts.push_back(fmt::format("steal {:.0f}%", num(h, "steal_pct")));
    if (h.contains("exits")) {
      const double ple = num(h.at("exits"), "ple"), hlt = num(h.at("exits"), "hlt");
      if (ple > 0) parts.push_back("PLE exits " + si(ple / secs) + "/s");
      if (hlt > 0) parts.push_back("HLT exits " + si(hlt / secs) + "/s");
    }
    if (num(h, "halt_masked_wakes") > 0)
      parts.push_back("masked-IRQ wakes " + si(num(h, "halt_masked_wakes") / secs) + "/s");
    if (h.contains("ple_yields") && num(h.at("ple_yields"), "done") > 0)
      parts.push_back("directed yields " + si(num(h.at("ple_yields"), "done") / secs) + "/s");
    if (h.contains("kick_yields") && num(h.at("kick_yields"), "tried") > 0)
      parts.push_back(kick_yields_part(h.at("kick_yields"), secs));
    if (h.contains("wakeups"))
      if (std::string w = wakeups_part(h.at("wakeups"), secs); !w.empty()) parts.push_back(w);
    if (h.contains("kick_to_entry"))
      if (std::string k = kick_entry_part(h.at("kick_to_entry")); !k.empty()) parts.push_back(k);
    if (h.contains("switch_ins") && num(h.at("switch_ins"), "n") > 0) {
      const auto& sw = h.at("switch_ins");
      parts.push_back(fmt::format("vCPU switch-ins {}/s ({:.0f}% preempted before guest entry)",
                                  si(num(sw, "n") / secs),
                                  100 * num(sw, "cancelled_before_entry") / num(sw, "n")));
    }
    if (num(h, "migrations") > 0)
      parts.push_back("vCPU migrations " + si(num(h, "migrations") / secs) + "/s");
    if (num(h, "lock_holder_preemptions") > 0)
      parts.push_back("lock-holder preemptions " + si(num(h, "lock_holder_preemptions") / secs) +
                      "/s");
  }
  if (run.contains("counters")) {
    const auto& c = run.at("counters");
    const double early = num(c, "pv_wait_early"), kicks = num(c, "pv_kick_wake");
    if (num(c, "pv_wait_node") > 0)
      parts.push_back("pv_wait_node " + si(num(c, "pv_wait_node") / secs) + "/s");
    if (early > 0)
      parts.push_back(fmt::format("wait-early {}/s ({:.0f}% by vcpu_is_preempted)",
                                  si(early / secs),
                                  100 * num(c, "pv_wait_early_preempted") / early));
    if (kicks > 0)
      parts.push_back(fmt::format("kick->run {:.1f} us", num(c, "pv_latency_wake") / kicks / 1e3));
    // How long a halted queued waiter stays halted: the time per pv_wait() (node or head)
    // tells a draining queue (the fast regime, ~0.5 ms) from a stalled one (tens of ms).
    const double halts = num(c, "pv_wait_node") + num(c, "pv_wait_head");
    if (const double halted_ns = symbol_ns(run, "pv_wait_halted"); halts > 0 && halted_ns > 0)
      parts.push_back(fmt::format("pv_wait halt {:.1f} us", halted_ns / halts / 1e3));
    if (num(c, "pv_lock_stealing") > 0)
      parts.push_back("steals " + si(num(c, "pv_lock_stealing") / secs) + "/s");
    if (num(c, "osq_unqueue_preempted") > 0)
      parts.push_back("OSQ unqueues (preempted prev) " +
                      si(num(c, "osq_unqueue_preempted") / secs) + "/s");
    const double sleeps =
        num(c, "mutex_sleep") + num(c, "rwsem_sleep_writer") + num(c, "rwsem_sleep_reader");
    if (sleeps > 0) parts.push_back("mutex/rwsem sleeps " + si(sleeps / secs) + "/s");
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// ebizzy's TLB shootdowns over the VMs: how often per VM, how long each waited for its
// last handler, and what the targets were doing when the IPIs went out -- in the collapse
// of seeds 000/001 the shootdowns wait on lock waiters halted with IRQs off.
std::string shootdowns_line(const nlohmann::ordered_json& run) {
  const double secs = num(run, "measured_ns") / 1e9;
  if (secs <= 0 || !run.contains("vms")) return {};
  static constexpr std::pair<const char*, const char*> kTargets[] = {
      {"halted_in_pv_wait", "halted in pv_wait"},
      {"preempted", "preempted"},
      {"irqs_off", "IRQs off"},
      {"halted_idle", "halted idle"},
      {"can_take", "able to take it"}};
  double sent = 0, done = 0, wait_ns = 0, targets = 0, vms = 0, queued = 0;
  double by[std::size(kTargets)] = {};
  for (const auto& vm : run.at("vms")) {
    if (!vm.contains("shootdowns")) continue;
    ++vms;
    const auto& sd = vm.at("shootdowns");
    sent += num(sd, "sent");
    done += num(sd, "done");
    wait_ns += num(sd, "wait_ns");
    queued += num(sd, "queued_without_ipi");
    for (std::size_t k = 0; k < std::size(kTargets); ++k) {
      const double n = num(sd.at("targets"), kTargets[k].first);
      by[k] += n;
      targets += n;
    }
  }
  if (sent <= 0) return {};
  std::string out = fmt::format("shootdowns {}/s per VM", si(sent / vms / secs));
  if (done > 0) {
    const double us = wait_ns / done / 1e3;
    out += us < 1000 ? fmt::format(" (wait {:.1f} us)", us)
                     : fmt::format(" (wait {:.1f} ms)", us / 1e3);
  }
  if (targets <= 0) return out;
  out += "; targets when sent:";
  for (std::size_t k = 0; k < std::size(kTargets); ++k)
    out +=
        fmt::format("{} {} {:.0f}%", k > 0 ? "," : "", kTargets[k].second, 100 * by[k] / targets);
  // smp_call_function_many()'s cpumask_ipi: a call queued behind one the target has not run
  // yet needs no IPI of its own.
  if (queued > 0)
    out += fmt::format("; {:.0f}% queued behind a pending IPI", 100 * queued / targets);
  return out;
}

std::string quarters_line(const nlohmann::ordered_json& run) {
  const std::string q = score_quarters(run);
  return q.empty() ? q : "score by quarter of the window (mean VM): " + q;
}

}  // namespace

// The mean VM score in each quarter of the measured window, from the run's series (rows of
// [t_ms, score, ...], each the rate over the interval ending at t_ms).
std::string score_quarters(const nlohmann::ordered_json& run) {
  if (!run.contains("series")) return {};
  const auto& series = run.at("series");
  const double window = num(run, "measured_ns") / 1e6;
  const double start = num(run, "simulated_ns") / 1e6 - window;
  const auto& vms = series.at("vms");
  if (window <= 0 || vms.empty()) return {};
  std::string unit;
  double q[4] = {0, 0, 0, 0};
  for (const auto& [name, vm] : vms.items()) {
    unit = vm.at("score_unit").get<std::string>();
    if (unit.empty()) return {};  // the score is not a rate
    double prev = 0;
    for (const auto& row : vm.at("rows")) {
      const double t = row.at(0).get<double>(), score = row.at(1).get<double>();
      for (int k = 0; k < 4; ++k) {
        const double lo = start + window * k / 4, hi = start + window * (k + 1) / 4;
        const double overlap = std::min(t, hi) - std::max(prev, lo);
        if (overlap > 0) q[k] += score * overlap / (window / 4);
      }
      prev = t;
    }
  }
  const auto n = static_cast<double>(vms.size());
  return fmt::format("{} / {} / {} / {} {}", si(q[0] / n), si(q[1] / n), si(q[2] / n), si(q[3] / n),
                     unit);
}

std::string explain_run(const nlohmann::ordered_json& run) {
  std::string out;
  for (const std::string& line :
       {quarters_line(run), profile_line(run), host_and_locks_line(run), shootdowns_line(run)})
    if (!line.empty()) out += (out.empty() ? "" : "\n") + line;
  return out;
}

std::int64_t quarters_series_interval_ns(double warmup_ms, double duration_ms) {
  const auto w = static_cast<std::int64_t>(std::llround(warmup_ms * 1e6));
  const auto d = static_cast<std::int64_t>(std::llround(duration_ms * 1e6));
  if (d <= 0 || d % 4 != 0 || w < 0) return 0;
  const std::int64_t g = std::gcd(w, d / 4);
  if (g <= 0 || (w + d) / g > 4000) return 0;
  return g;
}

}  // namespace pvlock::reproduce
