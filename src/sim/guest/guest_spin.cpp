// SPDX-License-Identifier: GPL-2.0-only
// Guest, lazy spinning: a spin loop watches the cache lines its condition read and sleeps
// until one is written (or its iteration budget runs out), the hypervisor watching it as a
// PAUSE loop meanwhile.
#include <algorithm>
#include <cmath>

#include "sim/guest/guest.hpp"
#include "sim/simulation.hpp"
#include "sim/trace/tracer.hpp"

namespace pvlock::sim {

void Guest::begin_record(Task& t) {
  sync(t);
  t.recording = true;
  t.rec_lines = 0;
  t.rec_overflow = false;
  t.rec_missed = false;
  t.rec_queue_ns = 0;
  t.rec_hit_ns = 0;
  t.rec_call_ns = 0;
  t.rec_count_n = 0;
}

void Guest::record_line(Task& t, std::uint64_t key, std::uint32_t version) {
  t.rec_hit_ns += sim_.coherence().l1_hit();
  for (int i = 0; i < t.rec_lines; ++i)
    if (t.rec_keys[static_cast<std::size_t>(i)] == key) return;
  if (t.rec_lines == kMaxWatchedLines) {
    t.rec_overflow = true;
    return;
  }
  t.rec_keys[static_cast<std::size_t>(t.rec_lines)] = key;
  t.rec_versions[static_cast<std::size_t>(t.rec_lines)] = version;
  ++t.rec_lines;
}

void Guest::unwatch_all(Task& t) {
  for (int i = 0; i < t.rec_lines; ++i) Coherence::unwatch(t.watch[static_cast<std::size_t>(i)]);
}

void Guest::watcher_fired(Task& t) {
  t.watch_fired = true;
  unwatch_all(t);
  Vcpu& v = *t.vcpu;
  if (v.curr != &t || !v.running || v.halted) return;
  // The spinner notices the change when the PAUSE in progress completes (or when the work
  // it still had pending is done): wake it then, and it re-reads at once.
  Time delay = 0;
  if (t.spin_per_iter > 0) {
    const Time spun = v.runtime(sim_.now()) - t.spin_rt0 - t.spin_pre;
    if (spun < 0) {
      delay = -spun;
    } else {
      const double k = std::ceil(static_cast<double>(spun) / t.spin_per_iter);
      delay = static_cast<Time>(std::ceil(k * t.spin_per_iter)) - spun;
    }
  }
  sim_.schedule_resume(v, sim_.now() + std::max<Time>(0, delay));
}

std::uint64_t Guest::spin_sleep(Task& t, Sym site, std::uint64_t n, double per_iter,
                                double call_ns_per_iter) {
  if (t.rec_overflow) n = std::min<std::uint64_t>(n, 1);
  if (n == 0) return 0;
  // Watch every line the condition read. If one already changed (the check yielded in
  // between), do not sleep: re-evaluate at once.
  Coherence& coh = sim_.coherence();
  t.watch_fired = false;
  for (int i = 0; i < t.rec_lines; ++i) {
    const auto k = static_cast<std::size_t>(i);
    Line* l = coh.find(t.rec_keys[k]);
    if (l == nullptr || l->version != t.rec_versions[k]) {
      for (int j = 0; j < i; ++j) Coherence::unwatch(t.watch[static_cast<std::size_t>(j)]);
      return 0;
    }
    Coherence::watch(*l, t.watch[k]);
  }
  // Fold the pending local time in, so that nothing yields between watching and sleeping.
  const auto pre = static_cast<Time>(t.pending_ns);
  t.pending_ns -= static_cast<double>(pre);
  const double span = std::min(1e15, static_cast<double>(n) * per_iter);
  const auto max_ns = static_cast<Time>(std::ceil(span));
  // The hypervisor watches PAUSE loops (pause-loop exiting).
  sim_.platform().spin_begin(*t.vcpu);
  t.spin_rt0 = t.vcpu->runtime(sim_.now());
  t.spin_pre = pre;
  t.spin_per_iter = per_iter;
  Time spun = wait(t, pre + max_ns, true) - pre;
  t.spin_per_iter = 0;
  sim_.platform().spin_end(*t.vcpu);
  unwatch_all(t);
  if (spun < 0) {
    t.pending_ns += static_cast<double>(-spun);
    spun = 0;
  }
  std::uint64_t done = 0;
  double accounted = static_cast<double>(spun);
  if (!t.watch_fired && spun >= max_ns) {
    done = span < 1e15 ? n : static_cast<std::uint64_t>(static_cast<double>(spun) / per_iter);
  } else {
    // Woken by a write (at the end of a PAUSE, see watcher_fired) or by an interrupt: the
    // iteration in progress completes before the condition is read again.
    // (Wake-ups are rounded up to whole ns: allow that nanosecond.)
    done = static_cast<std::uint64_t>(std::ceil(static_cast<double>(spun - 1) / per_iter));
    done = std::min(std::max<std::uint64_t>(done, 1), n);
    const double rest = static_cast<double>(done) * per_iter - static_cast<double>(spun);
    if (rest > 0) {
      t.pending_ns += rest;
      accounted += rest;
    }
  }
  const double calls = std::min(accounted, static_cast<double>(done) * call_ns_per_iter);
  profile_.add(site, accounted - calls);
  profile_.add(Sym::vcpu_is_preempted, calls);
  for (int i = 0; i < t.rec_count_n; ++i) {
    const auto& [e, k] = t.rec_counts[static_cast<std::size_t>(i)];
    counters_[e] += k * done;
  }
  return done;
}

}  // namespace pvlock::sim
