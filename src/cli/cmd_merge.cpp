// SPDX-License-Identifier: GPL-2.0-only
// `pvlock merge`: combine sweep results files (e.g. the shards of one sweep) into one.
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/files.hpp"
#include "sweep/results.hpp"
#include "sweep/vary.hpp"

namespace pvlock::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string out;
};

void register_merge(CLI::App& app, Action& action) {
  auto args = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand("merge", "Merge sweep results files (JSON lines)");
  cmd->add_option("inputs", args->inputs, "Results files")->required();
  cmd->add_option("--out", args->out, "Merged results file (overwritten)")->required();
  cmd->callback([args, &action] {
    action = [args] {
      for (const std::string& in : args->inputs) reject_directory(in, "a results file");
      try {
        const std::size_t n = sweep::merge_results(args->inputs, args->out);
        fmt::print(stderr, "merge: {} points written to {}\n", n, args->out);
        // A shard of a grid smaller than its N is legitimately empty, all of them are not.
        if (n == 0)
          fmt::print(stderr, "pvlock: warning: merge: the inputs hold no results at all\n");
      } catch (const sweep::SweepError& e) {
        throw UsageError(e.what());
      }
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{61, register_merge};

}  // namespace pvlock::cli
