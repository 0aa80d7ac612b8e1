// SPDX-License-Identifier: GPL-2.0-only
// The registry of the model's constants: every cost of [costs], every host and guest model
// constant and every workload estimate, with its value (read from the defaults the
// simulator uses, never a second copy of the numbers), unit, provenance, source and, for an
// estimate, the plausible range a sensitivity screening explores. `pvlock costs` prints it;
// docs/costs.md is generated from it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pvlock::model {

enum class Provenance {
  measured,  // a measured figure, or arithmetic on one, on the hardware the source names
  constant,  // a vendor or kernel constant: a manual's figure, a kernel default
  estimate,  // this model's estimate; never a measurement
};
std::string_view to_string(Provenance p);  // "measured", "constant", "estimate"

struct Range {
  double low = 0;
  double high = 0;
  std::string source;  // where the bounds come from
};

struct Constant {
  // The scenario key path below its table, which `--set` and `--params` name:
  // "costs.pause_ns", "host.kvm.ple_window", "guest.tick_ns", "ebizzy.zone_hold_ns"
  // (a workload's estimates under its [workload] type).
  std::string id;
  // The kernel's spelling for a kernel parameter (module parameter, sysctl, constant), e.g.
  // "ple_window"; otherwise the key itself.
  std::string name;
  double value = 0;
  std::string unit;
  Provenance provenance = Provenance::estimate;
  std::string source;
  std::optional<Range> range;  // required for an estimate
  bool integer = false;        // the scenario key takes an integer
  double cv = 0;               // > 0: the mean of a normal distribution with this cv
  std::string workload;        // the [workload] type for a workload's estimate, else empty
};

// Every constant, in table order (costs, host, host.kvm, guest, guest lock knobs,
// workloads).
const std::vector<Constant>& constants();
// nullptr if no constant has this id.
const Constant* find_constant(std::string_view id);

// The scenario override path of `c` for the VM at `vm` ([[vm]] index; ignored outside guest
// and workload constants): "costs.pause_ns", "vm[0].guest.tick_ns", "vm[1].workload.user_ns".
std::string override_key(const Constant& c, int vm);
// The TOML value that sets `c` to `v`: an integer when the key takes one (rounded), a
// {dist = "normal", ...} table for a distribution's mean, else the number.
std::string override_value(const Constant& c, double v);

}  // namespace pvlock::model
