// The pvlock command: each subcommand lives in its own cmd_<name>.cpp and registers itself
// on the CLI11 app. Exit codes: 0 success, 1 the run's verdict failed, 2 bad usage or input,
// 3 a liveness failure (stuck run).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace pvlock::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitStuck = 3;

// A usage error found after parsing (bad knob value, unknown lock…): message + exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each registrar adds one subcommand and stores the action to run if it is selected.
using Action = std::function<int()>;
void register_locks(CLI::App& app, Action& action);
void register_torture(CLI::App& app, Action& action);

}  // namespace pvlock::cli
