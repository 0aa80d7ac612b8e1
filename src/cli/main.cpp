#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "pvlock: paravirtual locking, natively and on a simulated over-committed host"};
  app.require_subcommand(1);
  pvlock::cli::Action action;
  pvlock::cli::register_locks(app, action);
  pvlock::cli::register_torture(app, action);
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
