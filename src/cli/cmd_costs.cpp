// SPDX-License-Identifier: GPL-2.0-only
// `pvlock costs`: every model constant with its value, unit, provenance, source and, for an
// estimate, its plausible range (model/constants.hpp; docs/costs.md is --markdown).
#include <fmt/core.h>

#include <memory>

#include "cli/commands.hpp"
#include "model/constants_report.hpp"

namespace pvlock::cli {
namespace {

struct CostsArgs {
  bool json = false;
  bool markdown = false;
};

void register_costs(CLI::App& app, Action& action) {
  auto args = std::make_shared<CostsArgs>();
  auto* cmd = app.add_subcommand(
      "costs", "List every model constant: value, unit, provenance, source, range");
  auto* json = cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_flag("--markdown", args->markdown, "Print the Markdown page docs/costs.md")
      ->excludes(json);
  cmd->callback([args, &action] {
    action = [args] {
      if (args->json)
        fmt::print("{}\n", model::constants_json().dump(2));
      else if (args->markdown)
        fmt::print("{}", model::constants_markdown());
      else
        fmt::print("{}", model::constants_text());
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{72, register_costs};

}  // namespace pvlock::cli
