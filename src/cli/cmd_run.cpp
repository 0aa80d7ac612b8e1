// SPDX-License-Identifier: GPL-2.0-only
// `pvlock run SCENARIO.toml`: simulate one scenario and print its result (see harness/run.hpp).
#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "cli/unused_knobs.hpp"
#include "harness/progress.hpp"
#include "harness/run.hpp"
#include "output/lockstat_text.hpp"
#include "output/profile_text.hpp"
#include "output/series_text.hpp"
#include "scenario/parse.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::cli {
namespace {

struct RunArgs {
  std::string path;
  std::vector<std::string> sets;
  bool json = false;
  bool lockstat = false;
  std::string trace_path;
  std::string trace_window;
  double series_ms = 0;
  CLI::Option* series = nullptr;
};

void print_text(const nlohmann::ordered_json& j) {
  fmt::print("scenario {}  seed {}  simulated {:.3f} ms (measured {:.3f} ms)\n",
             j["scenario"].get<std::string>(), j["seed"].get<std::uint64_t>(),
             j["simulated_ns"].get<double>() / 1e6, j["measured_ns"].get<double>() / 1e6);
  fmt::print("\n{:<16} {:<12} {:>6} {:>16} {}\n", "vm", "lock", "vcpus", "score", "unit");
  for (const auto& v : j["vms"])
    fmt::print("{:<16} {:<12} {:>6} {:>16.1f} {}\n", v["name"].get<std::string>(),
               v["lock"].get<std::string>(), v["vcpus"].get<int>(), v["score"].get<double>(),
               v["unit"].get<std::string>());
  std::string nonzero;
  for (const auto& [k, v] : j["counters"].items())
    if (v.get<std::uint64_t>() != 0) nonzero += fmt::format(" {}={}", k, v.get<std::uint64_t>());
  if (!nonzero.empty()) fmt::print("\ncounters:{}\n", nonzero);
  for (const auto& [vm, p] : j["profile"].items()) {
    fmt::print("\nprofile {} (CPU time per symbol):\n", vm);
    for (const auto& [sym, hundredths] : output::profile_rows(p["symbols"]))
      fmt::print("  {:>3}.{:02}%  {}\n", hundredths / 100, hundredths % 100, sym);
  }
  if (j.contains("faults")) {
    std::string f;
    for (const auto& [k, v] : j["faults"].items()) f += fmt::format(" {}={}", k, v.dump());
    fmt::print("\nfaults:{}\n", f);
  }
  const auto& perf = j["perf"];
  fmt::print(
      "\nperf: {:.3f} s wall, {:.3f} s CPU, {} events ({} stale; {:.2f} M per CPU-second), "
      "{:.3f} simulated s and {:.2f} vCPU-s per CPU-second, {} inline steps\n",
      perf["wall_s"].get<double>(), perf["cpu_s"].get<double>(),
      perf["events"].get<std::uint64_t>(), perf["stale_events"].get<std::uint64_t>(),
      perf["events_per_cpu_s"].get<double>() / 1e6, perf["sim_s_per_cpu_s"].get<double>(),
      perf["vcpu_s_per_cpu_s"].get<double>(), perf["inline_steps"].get<std::uint64_t>());
}

// Writes the trace; on failure removes the partial file (a truncated JSON is worse than none).
bool write_trace(const sim::trace::Tracer& tracer, std::ofstream& out, const std::string& path) {
  const double bytes = static_cast<double>(tracer.event_count()) * harness::kTraceBytesPerEvent;
  if (bytes >= harness::kTraceWarnBytes)
    fmt::print(stderr, "trace: writing {} events, about {:.1f} GB, to {}\n", tracer.event_count(),
               bytes / 1e9, path);
  tracer.write(out);
  out.close();
  if (out) return true;
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return false;
}

// Ctrl-C stopped the run: no result (its figures need the whole measured window), but the
// trace holds everything up to that moment, closed as a valid file.
int report_interrupted(const harness::Interrupted& e, sim::trace::Tracer* tracer,
                       std::ofstream& trace_out, const std::string& trace_path) {
  fmt::print(stderr,
             "pvlock: run interrupted at {:.6f} s of its {:.6f} s of simulated time; no result\n",
             static_cast<double>(e.at) / 1e9, static_cast<double>(e.end) / 1e9);
  if (tracer != nullptr) {
    if (write_trace(*tracer, trace_out, trace_path))
      fmt::print(stderr,
                 "trace: {} events up to the interruption written to {} (a complete, valid "
                 "trace)\n",
                 tracer->event_count(), trace_path);
    else
      fmt::print(stderr, "trace: writing '{}' failed; removed it\n", trace_path);
  }
  return kExitInterrupted;
}

void register_run(CLI::App& app, Action& action) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Simulate one scenario file");
  cmd->add_option("scenario", args->path, "Scenario TOML file")->required();
  cmd->add_option("--set", args->sets, "Override key.path=value (repeatable)");
  cmd->add_flag("--json", args->json, "Print one JSON object (always has \"lockstat\")");
  cmd->add_flag("--lockstat", args->lockstat,
                "Print lock statistics per lock instance, like /proc/lock_stat");
  cmd->add_option("--trace", args->trace_path,
                  "Write a Chrome/Perfetto JSON timeline of pCPUs and vCPUs to this file");
  cmd->add_option("--trace-window", args->trace_window,
                  "START:END in seconds of simulated time kept in the trace (e.g. 0.1:0.12)");
  args->series =
      cmd->add_option("--series", args->series_ms,
                      "Also print a time series: per VM, the score and the lock and host event "
                      "rates over every MS milliseconds of simulated time, warm-up included");
  cmd->callback([args, &action] {
    action = [args] {
      scenario::Scenario sc;
      try {
        sc = scenario::load_scenario_file(args->path, args->sets);
      } catch (const scenario::ScenarioError& e) {
        throw UsageError(e.what());
      }
      warn_unused_knobs(sc, args->sets);
      // Whole nanoseconds, at least 1 us (finer would drown in rows), at most the run.
      std::int64_t series_ns = 0;
      if (args->series->count() > 0) {
        const double run_ms = sc.run.warmup_ms + sc.run.duration_ms;
        if (!(args->series_ms >= 0.001) || args->series_ms > run_ms)
          throw UsageError(
              fmt::format("--series: {} ms is not an interval between 0.001 ms and the run's {} ms",
                          args->series_ms, run_ms));
        series_ns = static_cast<std::int64_t>(args->series_ms * 1e6 + 0.5);
      }
      if (!args->trace_window.empty() && args->trace_path.empty())
        throw UsageError("--trace-window needs --trace FILE");
      std::unique_ptr<sim::trace::Tracer> tracer;
      std::ofstream trace_out;
      if (!args->trace_path.empty()) {
        sim::trace::Window w;
        if (!args->trace_window.empty()) {
          try {
            w = sim::trace::parse_window(args->trace_window);
          } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
          }
          const double run_s = (sc.run.warmup_ms + sc.run.duration_ms) / 1e3;
          if (static_cast<double>(w.start) / 1e9 >= run_s)
            throw UsageError(fmt::format(
                "--trace-window {}: starts at {} s of simulated time, after the run's end at "
                "{} s (warm-up {} ms + {} ms); START:END are seconds",
                args->trace_window, static_cast<double>(w.start) / 1e9, run_s, sc.run.warmup_ms,
                sc.run.duration_ms));
        }
        // Opened before the run, so a bad path fails at once, not after a long simulation.
        trace_out.open(args->trace_path, std::ios::binary | std::ios::trunc);
        if (!trace_out) throw UsageError("--trace: cannot write '" + args->trace_path + "'");
        tracer = std::make_unique<sim::trace::Tracer>(w);
      }
      nlohmann::ordered_json j;
      // Progress and an estimate of a long run on stderr; Ctrl-C stops the run at its next
      // sample, with the trace so far written as a complete file.
      catch_interrupt();
      harness::ProgressOptions progress;
      progress.out = stderr;
      progress.tty = isatty(STDERR_FILENO) != 0;
      progress.cancel = &interrupt_flag();
      progress.tracer = tracer.get();
      try {
        j = harness::run_to_json(sc, tracer.get(), series_ns, &progress);
      } catch (const harness::Interrupted& e) {
        return report_interrupted(e, tracer.get(), trace_out, args->trace_path);
      } catch (const scenario::ScenarioError& e) {
        throw UsageError(e.what());
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      if (tracer && !write_trace(*tracer, trace_out, args->trace_path))
        throw UsageError("--trace: writing '" + args->trace_path + "' failed; removed it");
      if (args->json) {
        fmt::print("{}\n", j.dump(2));
      } else {
        print_text(j);
        if (args->lockstat) output::print_lockstat(j["lockstat"]);
        if (j.contains("series")) output::print_series(j["series"]);
      }
      if (tracer)
        fmt::print(stderr, "trace: {} events written to {}\n", tracer->event_count(),
                   args->trace_path);
      if (tracer && tracer->event_count() == 0)
        fmt::print(stderr, "pvlock: warning: the trace holds no events (--trace-window {})\n",
                   args->trace_window.empty() ? std::string("none") : args->trace_window);
      // A VM that completed nothing in the window scored 0: legitimate (a hold longer than
      // the run, a stuck guest), but never to pass unremarked.
      for (const auto& v : j["vms"])
        if (v["score"].get<double>() == 0 && !j.contains("liveness"))
          fmt::print(stderr,
                     "pvlock: warning: {} scored 0 {}: its workload completed nothing in the "
                     "{} ms measured window (an operation, hold or compute time longer than "
                     "the run?)\n",
                     v["name"].get<std::string>(), v["unit"].get<std::string>(),
                     sc.run.duration_ms);
      // A stuck run (liveness watchdog, sim/watchdog/): the diagnostic goes to stderr too.
      if (j.contains("liveness")) {
        std::fflush(stdout);
        fmt::print(stderr, "{}", j["liveness"]["text"].get<std::string>());
        return kExitStuck;
      }
      return kExitOk;
    };
  });
}

}  // namespace

static const CommandRegistration kRegistration{30, register_run};

}  // namespace pvlock::cli
