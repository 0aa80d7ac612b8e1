// SPDX-License-Identifier: GPL-2.0-only
// Microbenchmarks of the costs the simulator charges, each repeated and summarised as a
// Spread (calibrate/spread.hpp). All of them pin their threads with sched_setaffinity; times
// are CLOCK_MONOTONIC (vDSO) over loops long enough that the clock's own cost is noise.
#pragma once

#include <cstdint>
#include <optional>

#include "calibrate/spread.hpp"
#include "calibrate/system_facts.hpp"

namespace pvlock::calibrate {

struct BenchSize {
  int reps = 9;           // repetitions per microbenchmark
  double scale = 1;       // of each repetition's inner loop (1 = default size)
  double window_s = 0.4;  // observation window of the tick and slice measurements
};

// A dependent load chain over a 4 KiB working set (one line per step, random order): the
// latency of an L1 hit.
Spread measure_l1_hit_ns(const BenchSize& z);
// lock xadd on a line only this thread touches, back to back.
Spread measure_atomic_rmw_ns(const BenchSize& z);
// One PAUSE instruction (x86; other architectures: the cpu_relax() of native.hpp).
Spread measure_pause_ns(const BenchSize& z);
// Two threads pinned to pair.a / pair.b bounce one cache line (each waits for the other's
// write, then writes): the time of one line transfer, i.e. half a round trip. Timed in
// chunks of 500 round trips, so a chunk in which either thread lost its CPU (to another
// process or the hypervisor) is an outlier, not a bias; each repetition stops after 0.2 s.
Spread measure_line_transfer_ns(const BenchSize& z, CpuPair pair);

struct FutexWake {
  Spread wake_to_run_ns;  // FUTEX_WAKE issued -> the sleeper (another, idle CPU) runs
  Spread waker_ns;        // the FUTEX_WAKE system call on the waker, a sleeper present
  Spread syscall_ns;      // FUTEX_WAKE with nobody waiting: a bare system call round trip
};
// A sleeper pinned to pair.b, a waker to pair.a; the sleeper's CPU is idle when woken.
FutexWake measure_futex_wake(const BenchSize& z, CpuPair pair);
// Two threads pinned to one CPU hand a futex token back and forth: one switch between
// threads, the wake and the sleep system calls included (half a round trip).
Spread measure_context_switch_ns(const BenchSize& z, int cpu);

struct TickGaps {
  Spread interval_ns;  // between the starts of consecutive interruptions of a busy thread
  Spread gap_ns;       // how long each interruption took
};
// A CPU-bound thread pinned to `cpu` notes every time it was interrupted for more than
// 1.5 us; on a busy CPU the periodic ones are the timer tick (CONFIG_HZ).
TickGaps measure_tick(const BenchSize& z, int cpu);
// Two CPU-bound threads pinned to one CPU note when they run: the stretches between being
// switched out, the scheduler's slice as a CPU-bound thread sees it.
Spread measure_slice_ns(const BenchSize& z, int cpu);

}  // namespace pvlock::calibrate
