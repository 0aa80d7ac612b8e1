// SPDX-License-Identifier: GPL-2.0-only
// `pvlock bench`: will-it-scale-style throughput and fairness of pvlock's locks and their
// peers on real threads (see native/bench.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "native/bench.hpp"
#include "native/bench_report.hpp"
#include "pvlock/env/native.hpp"
#include "pvlock/lock/knobs.hpp"
#include "pvlock/lock/registry.hpp"

namespace pvlock::cli {
namespace {

struct BenchArgs {
  std::optional<std::string> locks;    // unset = every lock
  std::optional<std::string> threads;  // unset = 1..4 x hardware threads
  double duration = 1.0;
  long long cs_lines = 1;
  long long cs_ns = 0;
  long long outside_ns = 0;
  bool json = false;
  bool csv = false;
  bool list = false;
  std::vector<std::string> sets;
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
    if (!native::is_bench_lock(name))
      throw UsageError("unknown lock '" + name + "'; valid locks: " + native::bench_lock_names());
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw UsageError("--locks: '" + name + "' is listed twice in '" + arg + "'");
    out.push_back(name);
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
    if (n < 1 || n > native::kBenchMaxThreads)
      throw UsageError(fmt::format("--threads: each count must be between 1 and {}, got {}",
                                   native::kBenchMaxThreads, n));
    out.push_back(n);
  }
  return out;
}

// A knob none of the benchmarked locks reads would change nothing while the rows seem to
// say it was measured.
void reject_unused_knob(const std::vector<std::string>& locks, const std::string& kv) {
  const std::string knob = kv.substr(0, kv.find('='));
  std::vector<std::string> names = locks;
  if (names.empty())
    for (const native::BenchLock& l : native::bench_locks()) names.push_back(l.name);
  std::string list;
  for (const std::string& name : names) {
    list += (list.empty() ? "" : ", ") + name;
    for (const LockInfo& i : lock_infos<NativeEnv>())
      if (i.name == name && std::find(i.knobs.begin(), i.knobs.end(), knob) != i.knobs.end())
        return;
  }
  throw UsageError(
      fmt::format("--set {}: none of the locks benchmarked ({}) uses knob '{}'; "
                  "`pvlock locks` lists each lock's knobs",
                  kv, list, knob));
}

native::BenchOptions to_options(const BenchArgs& a) {
  native::BenchOptions o;
  if (a.locks) o.locks = parse_locks(*a.locks);
  if (a.threads) o.threads = parse_threads(*a.threads);
  if (!std::isfinite(a.duration) || a.duration <= 0 || a.duration > 3600)
    throw UsageError(
        fmt::format("--duration: must be > 0 and <= 3600 seconds, got {}", a.duration));
  if (a.cs_lines < 0 || a.cs_lines > native::kBenchMaxCsLines)
    throw UsageError(fmt::format("--cs-lines: must be between 0 and {}, got {}",
                                 native::kBenchMaxCsLines, a.cs_lines));
  constexpr long long kMaxNs = 1'000'000'000;
  if (a.cs_ns < 0 || a.cs_ns > kMaxNs)
    throw UsageError(fmt::format("--cs-ns: must be between 0 and {}, got {}", kMaxNs, a.cs_ns));
  if (a.outside_ns < 0 || a.outside_ns > kMaxNs)
    throw UsageError(
        fmt::format("--outside-ns: must be between 0 and {}, got {}", kMaxNs, a.outside_ns));
  o.duration_s = a.duration;
  o.cs_lines = static_cast<int>(a.cs_lines);
  o.cs_ns = a.cs_ns;
  o.outside_ns = a.outside_ns;
  for (const std::string& kv : a.sets) {
    if (auto err = apply_knob_assignment(o.policies, kv)) throw UsageError("--set: " + *err);
    reject_unused_knob(o.locks, kv);
  }
  // A kernel:* wait_lock runs the kernel's code on threads.
  if (auto err = resolve_raw_spinlock<NativeEnv>(o.policies))
    throw UsageError("--set wait_lock: " + *err);
  return o;
}

int run(const BenchArgs& a) {
  if (a.list) {
    for (const native::BenchLock& l : native::bench_locks())
      fmt::print("{:<18} {:<7} {:<9} {}\n", l.name, l.origin, l.kind, l.description);
    return kExitOk;
  }
  const native::BenchOptions o = to_options(a);
  if (a.csv) fmt::print("{}", native::bench_csv_header());
  if (!a.csv && !a.json) {
    fmt::print(
        "pvlock bench: {:.2f} s per point, cs {} lines + {} ns, outside {} ns, {} hw threads\n",
        o.duration_s, o.cs_lines, o.cs_ns, o.outside_ns, std::thread::hardware_concurrency());
    fmt::print("{}", native::bench_table_header());
  }
  std::fflush(stdout);
  const std::vector<native::BenchRow> rows = native::run_bench(o, [&](const native::BenchRow& r) {
    if (a.csv)
      fmt::print("{}", native::bench_csv_row(r));
    else if (!a.json)
      fmt::print("{}", native::bench_table_row(r));
    std::fflush(stdout);
  });
  if (a.json) fmt::print("{}\n", native::bench_json(o, rows).dump(2));
  std::fflush(stdout);
  if (!rows.empty() && rows.back().stuck) {
    fmt::print(stderr, "pvlock: {} with {} threads is stuck (threads did not stop)\n",
               rows.back().lock, rows.back().threads);
    std::_Exit(kExitStuck);  // stuck workers cannot be joined
  }
  return kExitOk;
}

void register_bench(CLI::App& app, Action& action) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand(
      "bench", "will-it-scale-style throughput and fairness of locks and peer locks");
  cmd->add_option("--locks", args->locks,
                  "Comma-separated locks (default: all; see `pvlock bench --list`)");
  cmd->add_option("--threads", args->threads,
                  "Comma-separated thread counts (default: 1, 2, 3, 4 x hardware threads)");
  cmd->add_option("--duration", args->duration, "Seconds per (lock, threads) point");
  cmd->add_option("--cs-lines", args->cs_lines,
                  "Shared cache lines written in the critical section");
  cmd->add_option("--cs-ns", args->cs_ns, "Busy-wait inside the critical section (ns)");
  cmd->add_option("--outside-ns", args->outside_ns, "Busy-wait between unlock and lock (ns)");
  cmd->add_option("--set", args->sets, "Policy knob name=value (repeatable; see `pvlock locks`)");
  auto* json = cmd->add_flag("--json", args->json, "Print one JSON document");
  cmd->add_flag("--csv", args->csv, "Print CSV")->excludes(json);
  cmd->add_flag("--list", args->list, "List the benchmarkable locks and exit");
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace

static const CommandRegistration kRegistration{30, register_bench};

}  // namespace pvlock::cli
