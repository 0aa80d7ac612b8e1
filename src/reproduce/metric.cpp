// SPDX-License-Identifier: GPL-2.0-only
#include "reproduce/metric.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "pvlock/env/lock_events.hpp"

namespace pvlock::reproduce {
namespace {

constexpr std::string_view kProfile = "profile:";
constexpr std::string_view kCounterShare = "counter_share:";
constexpr std::string_view kCounterRate = "counter_rate:";

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool known_event(std::string_view name) {
  return std::find(kLockEventNames.begin(), kLockEventNames.end(), name) != kLockEventNames.end();
}

// "a/b" of a counter_share metric; false if there is no single '/'.
bool split_share(const std::string& metric, std::string& a, std::string& b) {
  const std::string rest = metric.substr(kCounterShare.size());
  const auto slash = rest.find('/');
  if (slash == std::string::npos || rest.find('/', slash + 1) != std::string::npos) return false;
  a = rest.substr(0, slash);
  b = rest.substr(slash + 1);
  return true;
}

}  // namespace

std::string metric_error(const std::string& metric) {
  if (metric == "score_sum" || metric == "score_mean") return {};
  if (starts_with(metric, kProfile)) {
    return metric.size() > kProfile.size() ? std::string() : "profile: needs a symbol";
  }
  if (starts_with(metric, kCounterShare)) {
    std::string a, b;
    if (!split_share(metric, a, b)) return "counter_share: needs <event>/<event>";
    for (const std::string& e : {a, b})
      if (!known_event(e)) return "counter_share: unknown lock event '" + e + "'";
    return {};
  }
  if (starts_with(metric, kCounterRate)) {
    const std::string e = metric.substr(kCounterRate.size());
    return known_event(e) ? std::string() : "counter_rate: unknown lock event '" + e + "'";
  }
  return "must be score_sum, score_mean, profile:<symbol>, counter_share:<event>/<event> or "
         "counter_rate:<event>, not '" +
         metric + "'";
}

double extract_metric(const nlohmann::ordered_json& run, const std::string& metric) {
  if (metric == "score_sum" || metric == "score_mean") {
    const auto& vms = run.at("vms");
    if (vms.empty()) throw std::runtime_error("run has no VMs");
    double sum = 0;
    for (const auto& vm : vms) sum += vm.at("score").get<double>();
    return metric == "score_sum" ? sum : sum / static_cast<double>(vms.size());
  }
  if (starts_with(metric, kProfile)) {
    const std::string symbol = metric.substr(kProfile.size());
    // "profile": {vm: {"total_ns", "symbols": {name: {"ns", "pct"}}}}, summed over the VMs.
    // Like perf's cycles event in a guest, HLT time (idle, halted in pv_wait) takes no
    // samples, so the share is of the time the vCPUs executed.
    double total = 0, ns = 0;
    for (const auto& [vm, prof] : run.at("profile").items()) {
      total += prof.at("total_ns").get<double>();
      const auto& syms = prof.at("symbols");
      for (const char* unsampled : {"idle", "pv_wait_halted"})
        if (syms.contains(unsampled)) total -= syms.at(unsampled).at("ns").get<double>();
      if (syms.contains(symbol)) ns += syms.at(symbol).at("ns").get<double>();
    }
    return total > 0 ? 100.0 * ns / total : 0.0;
  }
  if (starts_with(metric, kCounterShare)) {
    std::string a, b;
    if (!split_share(metric, a, b)) throw std::runtime_error("malformed metric '" + metric + "'");
    // "counters": the lock events of all guests of the run, measured window only.
    const auto& counters = run.at("counters");
    const double den = counters.at(b).get<double>();
    // No event of the denominator: the statistic is undefined, not 0 %.
    return den > 0 ? 100.0 * counters.at(a).get<double>() / den : std::nan("");
  }
  if (starts_with(metric, kCounterRate)) {
    // Per VM and second of the measured window, as one guest's lock_event_counts read twice
    // some seconds apart give it (the counters sum every vCPU of every guest).
    const double seconds = run.at("measured_ns").get<double>() / 1e9;
    const auto vms = static_cast<double>(run.at("vms").size());
    if (seconds <= 0 || vms == 0) throw std::runtime_error("run has no measured window or no VMs");
    return run.at("counters").at(metric.substr(kCounterRate.size())).get<double>() / seconds / vms;
  }
  throw std::runtime_error("unknown metric '" + metric + "'");
}

}  // namespace pvlock::reproduce
