// SPDX-License-Identifier: GPL-2.0-only
// `pvlock calibrate`: measures this machine and describes it as a scenario fragment.
//
// The fragment has the [machine] topology from sysfs, the [costs] the microbenchmarks
// measure (each with its spread in a comment), and a [host] table with the running kernel's
// scheduler, its tick and slice: this machine seen as a host, whose threads are what a
// host's vCPU threads are to KVM. Constants nothing here can measure (VM exits, posted
// interrupts) are left out, so a scenario including the fragment keeps their defaults.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "calibrate/spread.hpp"
#include "calibrate/system_facts.hpp"

namespace pvlock::calibrate {

struct CalibrateOptions {
  bool quick = false;
};

struct Calibration {
  Topology topology;
  KernelFacts kernel;
  Spread l1_hit_ns;
  Spread atomic_rmw_ns;
  Spread pause_ns;
  std::optional<Spread> xfer_smt_ns;     // nullopt: no SMT siblings here
  std::optional<Spread> xfer_socket_ns;  // nullopt: no two cores share a socket
  std::optional<Spread> xfer_remote_ns;  // nullopt: one socket
  Spread futex_wake_to_run_ns;
  Spread futex_waker_ns;
  Spread syscall_ns;
  Spread context_switch_ns;
  Spread tick_interval_ns;
  Spread tick_gap_ns;
  Spread slice_ns;            // as a CPU-bound thread sees it
  double steal_fraction = 0;  // /proc/stat steal over the calibration's own run
  double elapsed_s = 0;

  // The timer tick the fragment states: CONFIG_HZ if the config is readable, else measured.
  std::int64_t tick_ns() const;
  // The slice the fragment states: debugfs if readable, else the kernel's default for this
  // many CPUs (the measured slice is the check: it is this rounded up to the tick).
  std::int64_t slice_ns_value() const;
  std::string slice_source() const;
};

// Runs every measurement; `progress` gets one line per step (the CLI prints it on stderr).
Calibration run_calibration(const CalibrateOptions& options,
                            const std::function<void(const std::string&)>& progress = {});

nlohmann::ordered_json to_json(const Calibration& c);
// Reads what to_json() wrote; throws std::runtime_error naming the missing or bad field.
Calibration calibration_from_json(const nlohmann::json& j);

// The scenario fragment: [machine], [costs] and [host] tables with comments giving each
// value's spread and source. `steal_as_noise` adds host housekeeping that takes the
// measured steal fraction of every CPU (see calibration.cpp).
std::string to_toml(const Calibration& c, bool steal_as_noise = false);

// Host housekeeping that takes `fraction` of a CPU: bursts every `interval_ns`.
inline constexpr std::int64_t kStealNoiseIntervalNs = 4'000'000;
std::int64_t steal_noise_burst_ns(double fraction);

}  // namespace pvlock::calibrate
