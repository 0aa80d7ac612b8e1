// SPDX-License-Identifier: GPL-2.0-only
// `pvlock calibrate`: measures this machine (calibrate/calibration.hpp) and prints, or writes
// to --out, a scenario fragment; --json prints every measurement with its spread instead.
// Progress goes to stderr.
#include <fmt/core.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "calibrate/calibration.hpp"
#include "cli/commands.hpp"

namespace pvlock::cli {
namespace {

struct CalibrateArgs {
  std::optional<std::string> out;
  bool quick = false;
  bool json = false;
  bool steal_as_noise = false;
};

int run(const CalibrateArgs& a) {
  std::ofstream file;
  if (a.out) {
    if (a.out->empty()) throw UsageError("--out: empty file name");
    file.open(*a.out);
    if (!file) throw UsageError("--out: cannot write '" + *a.out + "'");
  }
  calibrate::CalibrateOptions o;
  o.quick = a.quick;
  const calibrate::Calibration c = calibrate::run_calibration(o, [](const std::string& s) {
    fmt::print(stderr, "calibrate: {}\n", s);
    std::fflush(stderr);
  });
  const std::string text =
      a.json ? calibrate::to_json(c).dump(2) + "\n" : calibrate::to_toml(c, a.steal_as_noise);
  if (a.out) {
    file << text;
    file.close();
    if (!file) throw UsageError("--out: cannot write '" + *a.out + "'");
    fmt::print(stderr, "calibrate: wrote {}\n", *a.out);
  } else {
    fmt::print("{}", text);
  }
  return kExitOk;
}

void register_calibrate(CLI::App& app, Action& action) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Measure this machine's costs and scheduler; print a scenario fragment");
  cmd->add_option("--out", args->out, "Write the fragment (or the JSON) to FILE");
  cmd->add_flag("--quick", args->quick, "Fewer repetitions and shorter windows (~10 s)");
  cmd->add_flag("--json", args->json, "Print every measurement with its spread as JSON");
  cmd->add_flag("--steal-as-noise", args->steal_as_noise,
                "Turn the steal seen into host housekeeping in the fragment");
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace

static const CommandRegistration kRegistration{35, register_calibrate};

}  // namespace pvlock::cli
