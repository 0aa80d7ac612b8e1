// SPDX-License-Identifier: GPL-2.0-only
// A lock knob set with --set for a VM whose spinlock does not read it changes nothing. That
// is legitimate (a scenario shared by several locks), but never to pass unremarked: `run`,
// `sweep` and `diff-locks` warn. Only spinlock knobs are judged: a knob of the sleeping locks may
// matter to the workload's own mutexes and rwsems whatever the VM's spinlock is.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/knobs.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/parse.hpp"

namespace pvlock::cli {

// "guest.K" (bare metal: the one VM) or "vm[N].guest.K": N and K; false for other keys.
inline bool guest_knob_key(const std::string& key, std::size_t& vm, std::string& knob) {
  vm = 0;
  std::string rest = key;
  if (key.starts_with("vm[")) {
    const auto close = key.find("].guest.");
    if (close == std::string::npos || close == 3) return false;
    const std::string digits = key.substr(3, close - 3);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    vm = std::stoul(digits);
    rest = key.substr(close + 2);
  }
  if (!rest.starts_with("guest.")) return false;
  knob = rest.substr(6);
  return find_knob(knob) != nullptr;
}

// The key of a "key=value" override, without the blanks around it.
inline std::string override_key_of(const std::string& kv) {
  std::string key = kv.substr(0, kv.find('='));
  key.erase(key.find_last_not_of(" \t") + 1);
  key.erase(0, key.find_first_not_of(" \t"));
  return key;
}

// If `knob` is read only by spinlocks and `lock` is a spinlock that does not read it: the
// lock's own knobs, for the message ("its knobs: ..."); else an empty optional.
inline std::optional<std::string> spin_knob_unused_by(const std::string& lock,
                                                      const std::string& knob) {
  const auto infos = lock_infos<NativeEnv>();
  const auto uses = [](const LockInfo& i, const std::string& k) {
    return std::find(i.knobs.begin(), i.knobs.end(), k) != i.knobs.end();
  };
  const bool spin_only = std::none_of(infos.begin(), infos.end(), [&](const LockInfo& i) {
    return i.kind != LockKind::spin && uses(i, knob);
  });
  const auto it =
      std::find_if(infos.begin(), infos.end(), [&](const LockInfo& i) { return i.name == lock; });
  if (!spin_only || it == infos.end() || it->kind != LockKind::spin || uses(*it, knob)) return {};
  std::string knobs;
  for (std::string_view k : it->knobs) knobs += (knobs.empty() ? "" : ", ") + std::string(k);
  return knobs.empty() ? "it has no knobs" : "its knobs: " + knobs;
}

inline void warn_unused_knobs(const scenario::Scenario& sc, const std::vector<std::string>& sets) {
  for (const std::string& kv : sets) {
    std::size_t vm = 0;
    std::string knob;
    if (!guest_knob_key(override_key_of(kv), vm, knob) || vm >= sc.vms.size()) continue;
    const std::string& lock = sc.vms[vm].guest.lock_name;
    if (const auto knobs = spin_knob_unused_by(lock, knob))
      fmt::print(stderr,
                 "pvlock: warning: --set {}: the VM's lock '{}' does not use knob '{}' ({}); the "
                 "run is as without it\n",
                 kv, lock, knob, *knobs);
  }
}

// diff-locks runs every VM on lock A and then on lock B: a knob neither reads changes nothing.
inline void warn_knobs_unused_by_both(const std::string& a, const std::string& b,
                                      const std::vector<std::string>& sets) {
  for (const std::string& kv : sets) {
    std::size_t vm = 0;
    std::string knob;
    if (!guest_knob_key(override_key_of(kv), vm, knob)) continue;
    const auto unused_a = spin_knob_unused_by(a, knob);
    const auto unused_b = spin_knob_unused_by(b, knob);
    if (unused_a && unused_b)
      fmt::print(stderr,
                 "pvlock: warning: --set {}: neither '{}' nor '{}' uses knob '{}'; both runs are "
                 "as without it\n",
                 kv, a, b, knob);
  }
}

}  // namespace pvlock::cli
