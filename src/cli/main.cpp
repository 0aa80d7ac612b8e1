// SPDX-License-Identifier: GPL-2.0-only
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"

namespace pvlock::cli {
std::vector<std::pair<int, Registrar>>& command_registry() {
  static std::vector<std::pair<int, Registrar>> registry;
  return registry;
}
}  // namespace pvlock::cli

int main(int argc, char** argv) {
  CLI::App app{"pvlock: paravirtual locking, natively and on a simulated over-committed host"};
  app.require_subcommand(1);
  pvlock::cli::Action action;
  auto& registry = pvlock::cli::command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, registrar] : registry) registrar(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    (void)app.exit(e);  // prints the message
    return pvlock::cli::kExitUsage;
  }
  try {
    return action ? action() : pvlock::cli::kExitUsage;
  } catch (const pvlock::cli::UsageError& e) {
    fmt::print(stderr, "pvlock: {}\n", e.what());
    return pvlock::cli::kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "pvlock: error: {}\n", e.what());
    return pvlock::cli::kExitFailed;
  }
}
