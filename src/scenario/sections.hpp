// SPDX-License-Identifier: GPL-2.0-only
// Internal to the scenario parser: one reader per scenario section. Each reads the keys it
// knows into the struct (keeping scenario.hpp's defaults for absent keys), validates ranges,
// and rejects unknown keys.
#pragma once

#include "scenario/reader.hpp"
#include "scenario/scenario.hpp"

namespace pvlock::scenario::detail {

void read_run(Section& s, RunSpec& out);
void read_machine(Section& s, MachineSpec& out);
void read_costs(Section& s, Costs& out);
void read_host(Section& s, HostSpec& out);
void read_guest(Section& s, GuestSpec& out);
void read_workload(Section& s, WorkloadSpec& out);
// [workload] type = "program": the rest of the table (program_parse.cpp).
void read_program(Section& s, WorkloadSpec& out);
// A {dist = ...} table at `path`.
Dist read_dist(const Reader& r, const toml::table& t, const std::string& path);
// `virtualized`: host-only faults (adversarial host schedules) need a [host].
void read_faults(Section& s, FaultSpec& out, bool virtualized);
// `s` is one [[vm]] table; its name is left empty if the table has none.
void read_vm(Section& s, VmSpec& out);

}  // namespace pvlock::scenario::detail
