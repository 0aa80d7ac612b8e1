// SPDX-License-Identifier: GPL-2.0-only
// A task-program workload ([workload] type = "program"), as the scenario file describes it:
// named kernel objects (locks, wait queues, pipes), task groups whose programs are flat
// sequences of steps with loops, and a score computed from the programs' counters or marked
// sections. The parser (program_parse.cpp) checks everything it can before a run -- names,
// lock kinds, loop nesting, which locks are held where -- so a program that loads is one
// the interpreter (src/workload/program/) can run without a run-time error.
//
// The layout and every step are documented in docs/guide/programs.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace pvlock::scenario {

struct ProgramStep {
  enum class Op : std::uint8_t {
    compute,      // dist: user-mode work
    kernel,       // dist: work inside a system call (kernel_enter ... kernel_exit)
    lock,         // object = lock; flag = IRQs off (spinlock) / read (rwsem)
    unlock,       // object = lock; flag as at its lock step
    fault,        // dist per fault, n faults: the task's mm lock for read around each
    ipi,          // cpus (empty = every other vCPU), dist = handler; flag = wait for them
    wait,         // object = queue; section = wake-up latency section (-1: none)
    wake,         // object = queue; n tokens, flag = all waiters
    pipe_write,   // object = pipe; dist = copy held under the pipe mutex
    pipe_read,    // object = pipe; dist = copy held under the pipe mutex
    fork,         // object = group; n children
    vfork,        // object = group; n children sharing the mm, each blocking until it execs/exits
    exec,         // dist: the new image's work (load, map, start) beside the old mm's teardown
    reap,         // n children (0 = all the task's children)
    sleep,        // dist: a timer sleep
    count,        // object = counter; n
    section,      // object = section: start
    section_end,  // object = section: one sample of its latency
    loop,         // n iterations (0 = forever); jump = index of its end step
    end,          // jump = index of its loop step
  };
  Op op = Op::compute;
  Dist dist{};
  int object = -1;
  std::int64_t n = 1;
  bool flag = false;
  int section = -1;
  int jump = -1;
  std::vector<int> cpus;
  // ipi: the handler's time on each target; write/read: the copy under the pipe mutex.
  // Absent: the workload's default estimate.
  std::optional<Dist> hold;
  SourceRef where;
};

struct ProgramLock {
  std::string name;
  // "spinlock" (the guest's configured spinlock), "mutex", "rwsem" or any lock name of the
  // registry (`pvlock locks`).
  std::string kind;
  SourceRef where;
};

struct ProgramPipe {
  std::string name;
  std::int64_t capacity = 1;  // messages
};

struct ProgramGroup {
  std::string name;
  int tasks = 0;           // tasks at time 0 (tasks + tasks_per_vcpu x vCPUs)
  int tasks_per_vcpu = 0;  //
  int max = 0;             // task slots for forked children (max + max_per_vcpu x vCPUs;
  int max_per_vcpu = 0;    // none: the group is not forked), e.g. make -jN with N = vCPUs
  std::vector<ProgramStep> steps;
  SourceRef where;
};

// Costs of the process steps (fork, exec, exit, reap): work outside the locks and how long
// each lock the kernel takes there is held ([workload.costs]; absent: the workload's
// estimates, src/workload/estimates.hpp).
struct ProgramCosts {
  std::optional<Dist> fork_work, dup_mmap_hold, anon_vma_hold, tasklist_hold, exec_work, exit_work,
      reap_work;
};

struct ProgramScore {
  enum class Kind { rate, wall, latency } kind = Kind::rate;
  int counter = -1;         // rate, wall
  std::int64_t target = 0;  // wall: the job is done when the counter reaches this
  int section = -1;         // latency
  double percentile = 99;   // latency
  SourceRef where;
};

struct ProgramSpec {
  std::vector<ProgramLock> locks;
  std::vector<std::string> queues;
  std::vector<ProgramPipe> pipes;
  std::vector<std::string> counters;
  std::vector<std::string> sections;
  std::vector<ProgramGroup> groups;
  ProgramCosts costs;
  ProgramScore score;
};

}  // namespace pvlock::scenario
