// SPDX-License-Identifier: GPL-2.0-only
// A timeline of the simulation in the Chrome / Perfetto JSON trace format
// (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
//
// Tracks: one process for the host with a thread per pCPU (a slice per host thread it runs:
// which vCPU, or "stress"), and one process per VM with a thread per vCPU. A vCPU's slices
// say what it is doing from the point of view of a kernel engineer reading a lock trace:
// running a task (its name), spinning in a lock's slow path (the kernel symbol of the loop),
// halted in pv_wait (kvm_wait -> HLT), idle (HLT), preempted (descheduled by the host while
// runnable: steal time), woken and waiting for its pCPU, or in a PLE exit / VM entry.
// Instant events mark the decisions: pv_kick, pv_wait_early, HLT, preemption (lock holder or
// waiter), PLE exit, yield_to.
//
// The simulation holds a Tracer pointer, null when tracing is off (no cost beyond the test).
// Hooks call vcpu_update() whenever something the label depends on may have changed; the
// tracer derives the label from the vCPU and closes/opens a slice only when it changed.
// Only what overlaps the window is stored (slices are clipped to it), so the trace's size is
// bounded by the window, not the run. Output is a deterministic function of the run:
// timestamps are printed exactly (integer ns as µs with three decimals).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/trace/window.hpp"

namespace pvlock::sim {

class Simulation;
struct Vcpu;

namespace trace {

// Why a vCPU that is not halted is not running guest code (set by the host's hooks).
enum class OffReason : std::uint8_t {
  entry,      // VM entry / host switch latency
  preempted,  // involuntarily descheduled while runnable
  woken,      // kicked or interrupted out of HLT, waiting for its pCPU
  ple_exit,   // pause-loop exit round trip
};

class Tracer {
 public:
  explicit Tracer(Window w) : window_(w) {}

  // Before the run: names the tracks (the guests and the machine exist by then).
  void attach(Simulation& sim);
  // After the run: closes the open slices at `now`.
  void finish(Time now);

  // ---- Hooks ---------------------------------------------------------------------------
  // Something the vCPU's label depends on may have changed.
  void vcpu_update(const Vcpu& v, Time now);
  void vcpu_off_reason(const Vcpu& v, OffReason r, Time now);
  // pCPU `pcpu` now runs `next`, or, when it is null, the host thread named `other`
  // ("housekeeping", "stress"; a string literal), or nothing (both null: idle).
  void pcpu_switch(int pcpu, const Vcpu* next, const char* other, Time now);
  // An instant event on v's track; `target` (optional) is named in its args under
  // `target_key` ("to", or "prev" for pv_wait_early), `detail` too.
  void instant(const Vcpu& v, const char* name, Time now, const Vcpu* target = nullptr,
               const char* detail = nullptr, const char* target_key = "to");

  // ---- Output ------------------------------------------------------------------------------
  void write(std::ostream& out) const;
  std::size_t event_count() const { return events_.size(); }
  const Window& window() const { return window_; }

 private:
  struct Event {
    Time ts = 0;
    Time dur = -1;  // -1: instant
    int pid = 0;
    int tid = 0;
    std::string name;
    std::string args;  // a JSON object's members, without braces ("" = none)
  };
  // A track's open slice: `key` identifies the label cheaply (so that unchanged states cost
  // no string work), `name` is built only when the key changes.
  struct Track {
    std::uint64_t key = ~std::uint64_t{0};
    Time since = 0;
    std::string name;
    bool open = false;
  };

  std::uint64_t label_key(const Vcpu& v) const;
  std::string label(const Vcpu& v) const;
  void set_slice(Track& tr, int pid, int tid, std::uint64_t key, std::string name, Time now);
  void close(Track& tr, int pid, int tid, Time now);
  std::string vcpu_name(const Vcpu& v) const;

  Window window_;
  std::vector<Track> pcpus_;
  std::vector<Track> vcpus_;    // by global vCPU index
  std::vector<OffReason> off_;  // by global vCPU index
  std::vector<int> vcpu_pid_;   // by global vCPU index
  std::vector<std::string> guest_names_;
  std::vector<Event> events_;
  std::vector<std::string> metadata_;  // "M" events, JSON objects
};

}  // namespace trace
}  // namespace pvlock::sim
