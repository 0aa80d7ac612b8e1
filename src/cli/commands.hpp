// SPDX-License-Identifier: GPL-2.0-only
// The pvlock command: each subcommand lives in its own cmd_<name>.cpp and registers itself
// on the CLI11 app. Exit codes: 0 success, 1 the run's verdict failed, 2 bad usage or input,
// 3 a liveness failure (stuck run), 130 stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace pvlock::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitStuck = 3;
inline constexpr int kExitInterrupted = 130;

// A usage error found after parsing (bad knob value, unknown lock…): message + exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each subcommand file defines a registrar that adds its subcommand to the app and, in the
// subcommand's callback, stores the action to run. Files register themselves with a static
// CommandRegistration, so adding a subcommand is adding one cmd_<name>.cpp.
using Action = std::function<int()>;
using Registrar = void (*)(CLI::App& app, Action& action);

std::vector<std::pair<int, Registrar>>& command_registry();

struct CommandRegistration {
  // `order` sorts subcommands in --help.
  CommandRegistration(int order, Registrar r) { command_registry().emplace_back(order, r); }
};

}  // namespace pvlock::cli
