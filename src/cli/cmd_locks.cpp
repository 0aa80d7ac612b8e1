// SPDX-License-Identifier: GPL-2.0-only
// `pvlock locks`: every lock with a one-line description, the upstream era it follows and
// the knobs that affect it.
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli/commands.hpp"
#include "cli/lock_eras.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/knobs.hpp"
#include "pvlock/lock/registry.hpp"

namespace pvlock::cli {

namespace {
void register_locks(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("locks", "List every lock and every policy knob");
  auto names_only = std::make_shared<bool>(false);
  cmd->add_flag("--names", *names_only, "Print only the lock names, one per line");
  cmd->callback([&action, names_only] {
    action = [names_only] {
      if (*names_only) {
        for (const LockInfo& info : lock_infos<NativeEnv>()) fmt::print("{}\n", info.name);
        return kExitOk;
      }
      fmt::print("Locks:\n");
      std::size_t w = 12;  // the name column fits the longest name (kernel:pvqspinlock)
      for (const LockInfo& info : lock_infos<NativeEnv>()) w = std::max(w, info.name.size());
      for (const LockInfo& info : lock_infos<NativeEnv>()) {
        const char* kind = info.kind == LockKind::spin       ? "spin"
                           : info.kind == LockKind::sleeping ? "sleeping"
                                                             : "rw";
        fmt::print("  {:<{}} {:<9} {}\n", info.name, w, kind, info.description);
        if (!info.kernel_version.empty())
          fmt::print("  {:<{}} {:<9} built from Linux {}{}{}\n", "", w, "", info.kernel_version,
                     info.kernel_change.empty() ? "" : " + ", info.kernel_change);
        if (const std::string_view era = lock_era(info.name); !era.empty())
          fmt::print("  {:<{}} {:<9} era: {}\n", "", w, "", era);
        if (!info.knobs.empty()) {
          std::string names;
          for (auto k : info.knobs) names += (names.empty() ? "" : ", ") + std::string(k);
          fmt::print("  {:<{}} {:<9} knobs: {}\n", "", w, "", names);
        }
      }
#ifdef PVLOCK_KERNEL_STATUS
      fmt::print("  {:<{}} {:<9} {}\n", "kernel:*", w, "", PVLOCK_KERNEL_STATUS);
#endif
#ifdef PVLOCK_KERNEL_LOCKS
      for (const kernel::NotBuilt& v : kernel::kNotBuilt)
        if (v.name != nullptr)
          fmt::print("  {:<{}} {:<9} {}\n", fmt::format("kernel:{}/*", v.name), w, "", v.reason);
#endif
      fmt::print("\nKnobs (--set name=value):\n");
      const LockPolicies defaults{};
      for (const Knob& k : all_knobs()) {
        fmt::print("  {:<24} default {:<12} {}\n", k.name, k.get(defaults), k.description);
        fmt::print("  {:<24} kernel: {}; values: {}; from: {}\n", "", k.kernel_name, k.values,
                   k.origin);
      }
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{10, register_locks};

}  // namespace pvlock::cli
