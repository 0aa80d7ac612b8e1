// SPDX-License-Identifier: GPL-2.0-only
// Spin replay: the kernel's C spin loops (smp_cond_load_*(), pv_wait_node()'s and
// pv_wait_head_or_lock()'s SPIN_THRESHOLD loops, the pending loop, osq_lock()'s waits) at the
// cost of the Env's own spin_until(), without changing a line of them.
//
// The shim sees a kernel loop as a stream: the shared reads of one iteration (READ_ONCE,
// need_resched(), vcpu_is_preempted()), then cpu_relax(). When two consecutive iterations of
// one loop (one cpu_relax() call site) made the same reads and got the same values, the next
// ones will too until one of those values changes. So, in that cpu_relax(), the tracker
// waits out the following iterations with Env::spin_until() on those very reads -- in the
// simulator one sleep on the watched lines, charged as the iterations it covers (PAUSE plus
// the cached re-reads each, the PLE window watching it as for pvlock's own locks) -- and then
// replays them to the C loop: its reads return the recorded values and its cpu_relax()
// calls cost nothing, so its own counters (`loop`, `cnt`) run exactly as many iterations as
// were waited out. The reads spin_until() made last (the iteration in which a value changed,
// or the one after the budget) are handed to the C code as that iteration's reads.
//
// The C code decides by its counters where its loop changes shape: pv_wait_early() reads
// prev->state when (loop & 0xff) == 0, the pending loop stops after _Q_PENDING_LOOPS, the
// SPIN_THRESHOLD loops end. All of these fall on multiples of 256 iterations from the loop's
// first iteration (0x100, 512, 1 << 15), so a wait never runs past the next such iteration:
// there the C code runs for real again. A loop that leaves the recorded pattern inside a
// replay (a changed constant, an unknown loop) is a deviation: the time of the iterations
// it did not run was charged; it is counted (replay_deviations()) and warned about once.
//
// Plain (non-READ_ONCE) reads are invisible to the shim: osq_wait_next() tests node->next
// plainly, so a wait there ends when lock->tail changes or at the next 256-iteration mark.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>

#include "pvlock/env/environment.hpp"

namespace pvlock::kernel {

inline std::atomic<std::uint64_t>& replay_deviation_count() {
  static std::atomic<std::uint64_t> n{0};
  return n;
}
// Kernel loop iterations that were charged as waited out but not replayed as recorded.
inline std::uint64_t replay_deviations() {
  return replay_deviation_count().load(std::memory_order_relaxed);
}

// Where a kernel loop's shape can change (see the file comment).
inline constexpr std::uint64_t kReplayChunk = 256;

struct SpinReplay {
  enum Kind : std::uint8_t { kLoad, kNeedResched, kPreempted };
  struct Read {
    const volatile void* addr = nullptr;  // kNeedResched, kPreempted: nullptr
    std::uint64_t value = 0;
    int arg = 0;  // load: size | order << 8; kPreempted: the CPU asked about
    Kind kind = kLoad;
    bool same_read(const Read& o) const { return kind == o.kind && addr == o.addr && arg == o.arg; }
    bool operator==(const Read& o) const { return same_read(o) && value == o.value; }
  };
  static constexpr int kMax = 8;
  using Trace = std::array<Read, kMax>;

  Trace cur{};  // this iteration's reads so far
  int ncur = 0;
  bool cur_ok = true;  // cur holds every read of the iteration (no overflow)
  Trace prev{};        // the last iteration's reads
  int nprev = -1;      // -1: none (or not usable)
  // The loop followed: its cpu_relax() call site, the iterations it completed, the reads
  // that repeat (-1: not known yet) and whether its shape changes every kReplayChunk
  // iterations (pv_wait_node's prev->state look) or only at powers of two (the pending
  // loop's and the SPIN_THRESHOLD loops' ends).
  const void* site = nullptr;
  std::uint64_t index = 0;
  Trace pattern{};
  int npattern = -1;
  bool periodic = false;
  Trace mark{};  // the last iteration at a multiple of kReplayChunk
  int nmark = -1;

  // Replay: `full` whole iterations of the pattern, then the first `tail` reads of the
  // next iteration from `last` (what the wait read last).
  std::uint64_t full = 0;
  int pos = 0;
  int tail = -1;
  std::array<std::uint64_t, kMax> last{};
  int nlast = 0;

  bool warned = false;

  // Any access that is not a replayable read (a write, an RMW, a halt, a counter) ends the
  // loop the tracker was following.
  void reset() {
    if (full > 0) deviation();
    full = 0;
    tail = -1;
    ncur = 0;
    cur_ok = true;
    nprev = -1;
    site = nullptr;
    index = 0;
    npattern = -1;
    periodic = false;
    nmark = -1;
  }

  // A replayable read about to be made: if a replay serves it, *value is set and true is
  // returned; otherwise the caller makes it and reports it with record().
  bool serve(const Read& r, std::uint64_t* value) {
    if (full > 0) {
      if (pos < npattern && pattern[static_cast<std::size_t>(pos)].same_read(r)) {
        *value = pattern[static_cast<std::size_t>(pos++)].value;
        return true;
      }
      leave_replay();
      return false;
    }
    if (tail >= 0) {
      if (pos < tail && pattern[static_cast<std::size_t>(pos)].same_read(r)) {
        Read got = r;
        got.value = last[static_cast<std::size_t>(pos++)];
        record(got);
        *value = got.value;
        return true;
      }
      tail = -1;
    }
    return false;
  }
  void record(const Read& r) {
    if (ncur == kMax) {
      cur_ok = false;
      return;
    }
    cur[static_cast<std::size_t>(ncur++)] = r;
  }

  // cpu_relax(): true if it ends an iteration a replay served (no PAUSE to execute).
  bool relax_replayed() {
    if (full == 0) return false;
    if (pos != npattern) {
      leave_replay();
      return false;
    }
    pos = 0;
    ++index;
    if (--full == 0) tail = nlast;
    return true;
  }

  // After the PAUSE of an iteration the C code ran: returns how many of the following
  // iterations to wait out (0: none); the caller waits, then calls replay() with the number
  // waited. The iteration after them runs for real again: it lies on the loop's next mark.
  std::uint64_t end_iteration(const void* at) {
    tail = -1;
    if (at != site) {  // another loop
      site = at;
      index = 0;
      nprev = -1;
      npattern = -1;
      periodic = false;
      nmark = -1;
    }
    const std::uint64_t i = index++;
    const bool ok = cur_ok && ncur > 0;
    if (ok && npattern < 0 && ncur == nprev && equal(cur, prev, ncur)) {
      // Two iterations alike: the loop's pattern. Did it look different at its last mark?
      npattern = ncur;
      pattern = cur;
      periodic = nmark >= 0 && !(nmark == npattern && equal(mark, pattern, npattern));
    }
    bool repeat = false;
    if (ok && npattern > 0) {
      // This iteration made the pattern's reads and saw its values, possibly with more
      // reads after them (the iteration on a mark of a periodic loop).
      repeat = ncur >= npattern && equal(cur, pattern, npattern);
      if (!repeat && ncur == npattern && same_reads(cur, pattern, ncur)) {
        pattern = cur;  // the same reads saw new values and the loop goes on: a new pattern
        repeat = true;
      }
    }
    if (i % kReplayChunk == 0) {
      if (npattern > 0 && !(ok && ncur == npattern && equal(cur, pattern, npattern)))
        periodic = true;
      mark = cur;
      nmark = ok ? ncur : -1;
    }
    prev = cur;
    nprev = ok ? ncur : -1;
    ncur = 0;
    cur_ok = true;
    if (!repeat) return 0;
    std::uint64_t next = kReplayChunk;
    if (periodic) {
      next = (i / kReplayChunk + 1) * kReplayChunk;
    } else {
      while (next <= i) next *= 2;
    }
    return next - 1 - i;
  }
  void replay(std::uint64_t waited) {
    full = waited;
    pos = 0;
    tail = waited == 0 ? nlast : -1;
  }

 private:
  static bool equal(const Trace& x, const Trace& y, int n) {
    for (int k = 0; k < n; ++k)
      if (!(x[static_cast<std::size_t>(k)] == y[static_cast<std::size_t>(k)])) return false;
    return true;
  }
  static bool same_reads(const Trace& x, const Trace& y, int n) {
    for (int k = 0; k < n; ++k)
      if (!x[static_cast<std::size_t>(k)].same_read(y[static_cast<std::size_t>(k)])) return false;
    return true;
  }
  // The C code left the pattern inside a replay.
  void leave_replay() {
    deviation();
    full = 0;
    ncur = 0;
    cur_ok = false;  // the iteration began in the replay: not one to compare
  }
  void deviation() {
    replay_deviation_count().fetch_add(1, std::memory_order_relaxed);
    if (!warned) {
      warned = true;
      std::fprintf(stderr,
                   "kernel: spin replay: a kernel loop left its recorded pattern inside a wait; "
                   "the simulated time of iterations it did not run was charged\n");
    }
  }
};

}  // namespace pvlock::kernel
