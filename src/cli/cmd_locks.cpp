// `pvlock locks`: every lock with a one-line description and the knobs that affect it.
#include <fmt/core.h>

#include <memory>

#include "cli/commands.hpp"
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
      for (const LockInfo& info : lock_infos<NativeEnv>()) {
        const char* kind = info.kind == LockKind::spin       ? "spin"
                           : info.kind == LockKind::sleeping ? "sleeping"
                                                             : "rw";
        fmt::print("  {:<12} {:<9} {}\n", info.name, kind, info.description);
        if (!info.knobs.empty()) {
          std::string names;
          for (auto k : info.knobs) names += (names.empty() ? "" : ", ") + std::string(k);
          fmt::print("  {:<12} {:<9} knobs: {}\n", "", "", names);
        }
      }
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
