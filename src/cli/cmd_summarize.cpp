// SPDX-License-Identifier: GPL-2.0-only
// `pvlock summarize`: per sweep point and VM, mean, stddev and 95% interval across seeds.
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/files.hpp"
#include "sweep/results.hpp"
#include "sweep/summary.hpp"
#include "sweep/vary.hpp"

namespace pvlock::cli {
namespace {

struct SummarizeArgs {
  std::string input;
  bool csv = false;
};

void register_summarize(CLI::App& app, Action& action) {
  auto args = std::make_shared<SummarizeArgs>();
  auto* cmd = app.add_subcommand("summarize", "Statistics of a sweep results file");
  cmd->add_option("results", args->input, "Results file (JSON lines)")->required();
  cmd->add_flag("--csv", args->csv, "Print CSV instead of a table");
  cmd->callback([args, &action] {
    action = [args] {
      reject_directory(args->input, "a results file");
      std::vector<sweep::ResultLine> lines;
      try {
        lines = sweep::read_results(args->input, false, false);
      } catch (const sweep::SweepError& e) {
        throw UsageError(e.what());
      }
      if (lines.empty())
        throw UsageError(args->input +
                         ": no results (an empty file); `pvlock sweep --out FILE` writes them");
      try {
        const auto rows = sweep::summarize(lines);
        fmt::print("{}", args->csv ? sweep::format_csv(rows) : sweep::format_table(rows));
      } catch (const sweep::SweepError& e) {
        throw UsageError(args->input + ": " + e.what());
      }
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{62, register_summarize};

}  // namespace pvlock::cli
