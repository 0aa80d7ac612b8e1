// messaging: `perf bench sched messaging -p` (tools/perf/bench/sched-messaging.c, a port of
// hackbench) in one guest. Groups of 20 senders and 20 receivers; each receiver owns a pipe
// that all 20 senders of its group write 100-byte messages to. Every read and write takes
// the pipe's mutex (pipe->mutex: OSQ + owner spinning + sleeping, seed 003); a receiver
// that finds its pipe empty sleeps on the pipe's wait queue and the next writer wakes it;
// a writer that finds it full (capacity, in messages) sleeps until the reader drains it.
// The benchmark runs continuously; score = messages received per second (and the run time
// the configured -g/loops would take at that rate).
//
// [workload] type = "messaging", groups = 10, senders = 20, receivers = 20, loops = 100,
//   send_compute_ns, send_hold_ns, recv_compute_ns, recv_hold_ns = <dist>,
//   pipe_capacity = 10000 (messages; ~640 with 4 KiB pages, ~10000 with 64 KiB: workloads.md §3)
#pragma once

#include <memory>

#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

std::unique_ptr<Workload> make_messaging(const scenario::WorkloadSpec& spec, sim::Guest& guest);

}  // namespace pvlock::workload
