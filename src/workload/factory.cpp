// SPDX-License-Identifier: GPL-2.0-only
// The workload types the simulator knows, by [workload] type.
#include <string>

#include "scenario/parse.hpp"
#include "sim/context.hpp"
#include "sim/guest/guest.hpp"
#include "workload/ebizzy.hpp"
#include "workload/estimates.hpp"
#include "workload/lockloop.hpp"
#include "workload/messaging.hpp"
#include "workload/program/program.hpp"
#include "workload/torture.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

namespace {

// A workload that is lockloop with other defaults: keys the scenario sets win.
scenario::WorkloadSpec preset(
    const scenario::WorkloadSpec& spec,
    std::initializer_list<std::pair<const char*, scenario::ParamValue>> d) {
  scenario::WorkloadSpec out = spec;
  for (const auto& [key, value] : d)
    if (out.params.find(key) == out.params.end()) {
      scenario::Param p{value, spec.where};
      p.where.key_path += std::string(".") + key;
      out.params.emplace(key, std::move(p));
    }
  return out;
}

scenario::Dist ns(double v) {
  scenario::Dist d;
  d.mean = v;
  return d;
}

}  // namespace

std::unique_ptr<Workload> make_workload(const scenario::WorkloadSpec& spec, sim::Guest& guest) {
  // The workload's locks are this guest's kernel objects (RawSpinlock reads its policies).
  const sim::GuestSetUp setup(guest);
  if (spec.type == "lockloop") return make_lockloop(spec, guest);
  if (spec.type == "torture") return make_torture(spec, guest);
  if (spec.type == "ebizzy") return make_ebizzy(spec, guest);
  if (spec.type == "messaging") return make_messaging(spec, guest);
  // Task programs written in the scenario (docs/guide/programs.md).
  if (spec.type == "program") return make_program(spec, guest);
  // will-it-scale lock2_threads (seed 002; estimates): one task per vCPU, each fcntl() call is
  // ~0.47 us of syscall work around a ~0.15 us hold of the inode's flc_lock spinlock.
  if (spec.type == "lock2")
    return make_lockloop(preset(spec, {{"compute_ns", ns(estimates::lock2::compute_ns)},
                                       {"hold_ns", ns(estimates::lock2::hold_ns)}}),
                         guest);
  // fio sequential 4 KiB writes to one file (seed 004; estimates): every write takes the inode
  // rwsem for write, ~1.5 us held (derived from 2563 MB/s), ~1 us of fio/syscall work.
  if (spec.type == "fio")
    return make_lockloop(preset(spec, {{"lock", std::string("rwsem")},
                                       {"compute_ns", ns(estimates::fio::compute_ns)},
                                       {"hold_ns", ns(estimates::fio::hold_ns)},
                                       {"bytes_per_op", std::int64_t{4096}}}),
                         guest);
  scenario::fail_at(spec.type_where.file.empty() ? spec.where : spec.type_where,
                    "unknown workload type '" + spec.type +
                        "'; types: lockloop, torture, ebizzy, lock2, messaging, fio, program");
}

}  // namespace pvlock::workload
