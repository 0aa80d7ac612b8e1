// SPDX-License-Identifier: GPL-2.0-only
// messaging: `perf bench sched messaging -p` (tools/perf/bench/sched-messaging.c, a port of
// hackbench) in one guest. Groups of 20 senders and 20 receivers; each receiver owns a pipe
// that all 20 senders of its group write 100-byte messages to. Every read and write takes
// the pipe's mutex (pipe->mutex: OSQ + owner spinning + sleeping, seed 003); a receiver
// that finds its pipe empty sleeps on the pipe's wait queue and the next writer wakes it;
// a writer that finds it full (capacity, in messages) sleeps until the reader drains it.
// By default the tasks never exit (the steady state of the messaging phase); score =
// messages received per second (and the run time the configured -g/loops would take at
// that rate).
//
// lifecycle = true adds the processes' lives, which `perf record -a` of the benchmark
// samples too: a parent task forks every child (copy_process: the
// parent's root anon_vma rwsem for write in anon_vma_fork, then tasklist_lock for write
// with IRQs off), releases each group with a "go", and reaps with wait() (a scan of its
// children list under tasklist_lock, wait_consider_task per child, then release_task under
// tasklist_lock for write). A child runs `loops` rounds (a sender writes one message to each
// receiver per round; a receiver reads senders x loops messages) and exits (exit_mmap ->
// unlink_anon_vmas under the root anon_vma for write, then exit_notify under tasklist_lock
// for write with IRQs off, waking the parent). Once every child of a group is reaped the
// parent forks the group again, so forks, messaging, exits and reaps keep the per-task
// proportions of one whole run in a window of any length. The run starts in that steady
// state: the first incarnations exist at time 0 (forked before the run, at no cost), group
// g's running (g + 1)/groups of the loops so that group turnovers are spread from the start.
// lifecycle_runs = true instead repeats whole benchmark runs: fork every group serially,
// one "go" for all, reap all 40 x groups children, again (a window must then span whole
// runs to sample their phases in proportion).
// tasklist_lock is the guest's spinlock used exclusively by readers too (pvlock has no
// rwlock; with one reader, the parent, only qrwlock's queueing order is lost).
//
// [workload] type = "messaging", groups = 10, senders = 20, receivers = 20, loops = 100,
//   send_compute_ns, send_hold_ns, recv_compute_ns, recv_hold_ns = <dist>,
//   pipe_capacity = 10000 (messages; ~640 with 4 KiB pages, ~10000 with 64 KiB),
//   lifecycle = false, lifecycle_runs = false, fork_ns = 50000, exit_ns = 25000 (work outside the
//   locks; estimates of this model), fork_anon_vma_hold_ns = 2000, exit_anon_vma_hold_ns = 2000,
//   tasklist_hold_ns = 1000, reap_scan_ns = 20 (per child scanned) (estimates),
//   file_vmas = 0, mapped_files = 1, i_mmap_hold_ns = 1000: each process's file-backed VMAs
//   (the binary's and its libraries' mappings, consecutive runs per file); fork (dup_mmap)
//   and exit (unlink_file_vma) take each one's mapping->i_mmap_rwsem for write, the
//   benchmark's processes all mapping the same files. Off (0) unless set; no experiment sets
//   it (docs/investigations/seed003.md).
#pragma once

#include <memory>

#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

std::unique_ptr<Workload> make_messaging(const scenario::WorkloadSpec& spec, sim::Guest& guest);

}  // namespace pvlock::workload
