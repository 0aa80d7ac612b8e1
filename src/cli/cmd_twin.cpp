// SPDX-License-Identifier: GPL-2.0-only
// `pvlock twin`: the will-it-scale lock loop natively and in the simulator on this machine's
// calibrated twin, cell by cell (twin/twin.hpp). Progress goes to stderr.
#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "calibrate/calibration.hpp"
#include "cli/commands.hpp"
#include "cli/data_dir.hpp"
#include "cli/files.hpp"
#include "cli/limits.hpp"
#include "twin/twin.hpp"

namespace pvlock::cli {
namespace {

struct TwinArgs {
  bool quick = false;
  std::optional<std::string> locks;
  std::optional<std::string> threads;
  bool json = false;
  std::optional<std::string> plot_dir;
  std::optional<std::string> calibration;
  std::optional<std::string> out;
  std::optional<double> native_s;
  std::optional<double> sim_ms;
  long long cs_ns = 200;
  long long outside_ns = 500;
  bool steal_as_noise = false;
  bool background_as_stress = false;
  long long seed = 1;
  long long jobs = -1;  // -1: not given (the CPUs)
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(',', start), s.size());
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> parse_locks(const std::string& arg) {
  std::vector<std::string> out;
  for (const std::string& name : split_commas(arg)) {
    if (name.empty()) throw UsageError("--locks: empty lock name in '" + arg + "'");
    try {
      (void)twin::find_twin(name);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--locks: ") + e.what());
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

std::vector<int> parse_threads(const std::string& arg) {
  std::vector<int> out;
  for (const std::string& item : split_commas(arg)) {
    int n = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc{} || p != item.data() + item.size())
      throw UsageError("--threads: expected a comma-separated list of integers, got '" + arg + "'");
    if (n < 1 || n > 256)
      throw UsageError(fmt::format("--threads: each count must be between 1 and 256, got {}", n));
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

calibrate::Calibration load_calibration(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UsageError("--calibration: '" + path + "': a directory, not a calibration file");
  std::ifstream in(path);
  if (!in) throw UsageError("--calibration: cannot read '" + path + "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("--calibration: '" + path +
                     "' is not JSON (write it with `pvlock calibrate "
                     "--json --out FILE`): " +
                     e.what());
  }
  try {
    return calibrate::calibration_from_json(j);
  } catch (const std::exception& e) {
    throw UsageError("--calibration: '" + path + "': " + e.what());
  }
}

int run(const TwinArgs& a) {
  twin::TwinOptions o;
  if (a.locks) o.locks = parse_locks(*a.locks);
  if (a.threads) o.threads = parse_threads(*a.threads);
  o.native_s = a.native_s.value_or(a.quick ? 0.25 : 1.0);
  if (!std::isfinite(o.native_s) || o.native_s <= 0 || o.native_s > 600)
    throw UsageError(fmt::format("--native-s: must be > 0 and <= 600, got {}", o.native_s));
  // A convoy on 2 CPUs lasts slices of 4 ms: 200 ms hold dozens of them.
  o.sim.duration_ms = a.sim_ms.value_or(a.quick ? 200 : 1000);
  if (!std::isfinite(o.sim.duration_ms) || o.sim.duration_ms <= 0 || o.sim.duration_ms > 60'000)
    throw UsageError(fmt::format("--sim-ms: must be > 0 and <= 60000, got {}", o.sim.duration_ms));
  o.sim.warmup_ms = std::min(20.0, o.sim.duration_ms / 5);
  constexpr long long kMaxNs = 10'000'000;
  if (a.cs_ns < 0 || a.cs_ns > kMaxNs)
    throw UsageError(fmt::format("--cs-ns: must be between 0 and {}, got {}", kMaxNs, a.cs_ns));
  if (a.outside_ns < 0 || a.outside_ns > kMaxNs)
    throw UsageError(
        fmt::format("--outside-ns: must be between 0 and {}, got {}", kMaxNs, a.outside_ns));
  if (a.seed < 0) throw UsageError(fmt::format("--seed: must be >= 0, got {}", a.seed));
  if (a.jobs != -1) check_jobs(a.jobs);
  o.workload.cs_ns = a.cs_ns;
  o.workload.outside_ns = a.outside_ns;
  o.sim.steal_as_noise = a.steal_as_noise;
  o.background_as_stress = a.background_as_stress;
  o.background_window_s = a.quick ? 0.05 : 0.2;
  o.sim.seed = static_cast<std::uint64_t>(a.seed);
  o.sim_jobs = a.jobs > 0 ? static_cast<int>(a.jobs)
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::ofstream out_file;
  if (a.out) {
    out_file.open(*a.out);
    if (!out_file) throw UsageError("--out: cannot write '" + *a.out + "'");
  }
  if (a.plot_dir) {
    make_plot_dir(*a.plot_dir);
  }

  const auto progress = [](const std::string& prefix) {
    return [prefix](const std::string& s) {
      fmt::print(stderr, "{}: {}\n", prefix, s);
      std::fflush(stderr);
    };
  };
  calibrate::Calibration cal;
  if (a.calibration) {
    cal = load_calibration(*a.calibration);
  } else {
    calibrate::CalibrateOptions co;
    co.quick = true;
    cal = calibrate::run_calibration(co, progress("calibrate"));
  }
  const twin::TwinResult r = twin::run_twin(cal, o, progress("twin"));
  const std::string json = twin::to_json(r).dump(2) + "\n";
  if (a.json)
    fmt::print("{}", json);
  else
    fmt::print("{}", twin::table_text(r));
  if (a.out) {
    out_file << json;
    out_file.close();
    if (!out_file) throw UsageError("--out: cannot write '" + *a.out + "'");
  }
  if (a.plot_dir) {
    const std::string tmp = *a.plot_dir + "/twin.json";
    std::ofstream(tmp) << json;
    if (!run_tool("plot_twin.py", {tmp, *a.plot_dir})) return kExitFailed;
  }
  return kExitOk;
}

void register_twin(CLI::App& app, Action& action) {
  auto args = std::make_shared<TwinArgs>();
  auto* cmd = app.add_subcommand(
      "twin", "Run the lock loop natively and on this machine's simulated twin, side by side");
  cmd->add_flag("--quick", args->quick,
                "Quick calibration, 0.25 s native and 200 ms simulated per cell");
  cmd->add_option("--locks", args->locks,
                  "Comma-separated native locks with a twin (default: all of them)");
  cmd->add_option("--threads", args->threads,
                  "Comma-separated thread counts (default: 1, 1x, 2x, 4x the CPUs)");
  cmd->add_flag("--json", args->json, "Print one JSON document: every cell and the summary");
  cmd->add_option("--plot", args->plot_dir, "Write one PNG per lock (both curves) to DIR");
  cmd->add_option("--calibration", args->calibration,
                  "Use this `pvlock calibrate --json` output instead of calibrating now");
  cmd->add_option("--out", args->out, "Also write the JSON document to FILE");
  cmd->add_option("--native-s", args->native_s, "Seconds per native cell");
  cmd->add_option("--sim-ms", args->sim_ms, "Simulated milliseconds per cell (after warm-up)");
  cmd->add_option("--cs-ns", args->cs_ns, "Busy-wait inside the critical section (ns)");
  cmd->add_option("--outside-ns", args->outside_ns, "Busy-wait between unlock and lock (ns)");
  cmd->add_flag("--steal-as-noise", args->steal_as_noise,
                "Simulate the calibration's steal as host housekeeping");
  cmd->add_flag("--background-as-stress", args->background_as_stress,
                "Simulate the other processes' runnable threads seen before each native cell "
                "as CPU-bound host threads");
  cmd->add_option("--seed", args->seed, "Simulation seed");
  cmd->add_option("--jobs", args->jobs, "Simulations at once, 1..256 (default: the CPUs)");
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace

static const CommandRegistration kRegistration{36, register_twin};

}  // namespace pvlock::cli
