// SPDX-License-Identifier: GPL-2.0-only
// `pvlock diff-locks A B SCENARIO.toml [--seeds N] [--json]`: the scenario with every VM on
// lock A, then on lock B, over N seeds; per counter and for the score the two
// distributions and a verdict (harness/lock_diff.hpp).
#include <fmt/core.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/limits.hpp"
#include "cli/unused_knobs.hpp"
#include "harness/lock_diff.hpp"
#include "scenario/parse.hpp"

namespace pvlock::cli {
namespace {

struct DiffArgs {
  std::string lock_a, lock_b, path;
  std::vector<std::string> sets;
  int seeds = 5;
  bool json = false;
};

void register_diff_locks(CLI::App& app, Action& action) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand(
      "diff-locks",
      "Run a scenario with lock A and with lock B over several seeds and compare the score and "
      "the lock event counters (e.g. pvqspinlock kernel:pvqspinlock)");
  cmd->add_option("lock_a", args->lock_a, "First lock (every VM of the scenario runs it)")
      ->required();
  cmd->add_option("lock_b", args->lock_b, "Second lock")->required();
  cmd->add_option("scenario", args->path, "Scenario TOML file")->required();
  cmd->add_option(
      "--seeds", args->seeds,
      "Seeds per lock: the scenario's seed and the following ones, 1..1000 (default 5)");
  cmd->add_option("--set", args->sets, "Override key.path=value (repeatable)");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->callback([args, &action] {
    action = [args] {
      check_seeds(args->seeds);
      // Both runs put every VM on their lock: an override of a VM's lock would be undone
      // silently (or, applied, compare a lock with itself).
      for (const std::string& kv : args->sets) {
        std::string key = kv.substr(0, kv.find('='));
        key.erase(key.find_last_not_of(" \t") + 1);
        if (key == "guest.lock" || key.ends_with("].guest.lock"))
          throw UsageError("--set " + kv +
                           ": diff-locks sets every VM's lock to LOCK_A and to LOCK_B; give "
                           "the locks as its two arguments");
      }
      warn_knobs_unused_by_both(args->lock_a, args->lock_b, args->sets);
      harness::LockDiff d;
      try {
        d = harness::diff_locks(args->lock_a, args->lock_b, args->path, args->sets, args->seeds);
      } catch (const scenario::ScenarioError& e) {
        throw UsageError(e.what());
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      if (args->json)
        fmt::print("{}\n", harness::diff_to_json(d).dump(2));
      else
        fmt::print("{}", harness::diff_to_text(d));
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{37, register_diff_locks};

}  // namespace pvlock::cli
