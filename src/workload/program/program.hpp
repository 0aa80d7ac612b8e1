// SPDX-License-Identifier: GPL-2.0-only
// program: a workload described as data ([workload] type = "program"; the format is in
// scenario/program.hpp and docs/guide/programs.md). The validated steps are compiled at
// set-up into one flat array per group, with loop ends resolved to indices and every
// default cost filled in; each task interprets its group's array with a program counter
// and per-step loop counters preallocated, so a running program allocates nothing.
#pragma once

#include <memory>

#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

std::unique_ptr<Workload> make_program(const scenario::WorkloadSpec& spec, sim::Guest& guest);

}  // namespace pvlock::workload
