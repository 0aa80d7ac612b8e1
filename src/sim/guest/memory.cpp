// SPDX-License-Identifier: GPL-2.0-only
// The simulated memory operations behind SimAtomic (see sim_atomic.hpp, coherence.hpp).
#include <algorithm>
#include <cmath>

#include "sim/context.hpp"
#include "sim/guest/guest.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim::mem {

void load(const void* addr) {
  Task* t = tl_ctx.task;
  if (t == nullptr || t->loads_settled) return;
  Guest& g = *t->guest;
  Simulation& s = g.sim();
  Coherence& coh = s.coherence();
  const std::uint64_t key = line_key(addr);
  if (t->recording) {
    // Inside a spin condition: no yield; remember the line so the spinner can sleep on it.
    if (t->in_check && t->check_addr == nullptr) t->check_addr = addr;
    Line& l = coh.line(key);
    g.record_line(*t, key, l.version);
    const double cost = coh.load(l, t->vcpu->pcpu);
    if (cost > coh.l1_hit()) {
      // The value the condition saw is the one at issue; spin_until waits for the data
      // (behind any write in flight, which the home serves first) and reads it again.
      t->rec_missed = true;
      const double issue = static_cast<double>(s.now()) + t->pending_ns;
      t->rec_queue_ns = std::max(t->rec_queue_ns, static_cast<double>(l.busy_until) - issue);
    }
    g.charge(*t, cost);
    return;
  }
  g.sync(*t);
  Line& l = coh.line(key);
  const Time busy = l.busy_until;
  const double cost = coh.load(l, t->vcpu->pcpu);
  if (cost > coh.l1_hit()) {
    // A miss returns the line as it is when the data arrives: a write in flight on it is
    // served first (the home orders them), and the value is read at completion.
    if (busy > s.now()) {
      g.profile().add(t->sym, static_cast<double>(busy - s.now()));
      g.wait(*t, busy - s.now(), false);
    }
    g.charge(*t, cost);
    g.sync(*t);
  } else {
    g.charge(*t, cost);
  }
  s.faults().on_access(*t);
}

void write(const void* addr, bool rmw) {
  Task* t = tl_ctx.task;
  if (t == nullptr) return;
  Guest& g = *t->guest;
  Simulation& s = g.sim();
  Coherence& coh = s.coherence();
  const std::uint64_t key = line_key(addr);
  // A spin condition must be read-only; if one writes, its recording cannot be trusted.
  if (t->recording) t->rec_overflow = true;
  g.sync(*t);
  Line& l = coh.line(key);
  const Time start = std::max(s.now(), l.busy_until);
  const double base = rmw ? coh.atomic_local() : coh.l1_hit();
  const double cost = coh.write(l, t->vcpu->pcpu, rmw);
  l.busy_until = start + std::max<Time>(1, round_ns(cost));
  // Writes to one line serialise: wait for the ones ahead of us (a memory stall).
  if (start > s.now()) {
    g.profile().add(t->sym, static_cast<double>(start - s.now()));
    g.wait(*t, start - s.now(), false);
  }
  g.charge(*t, cost);
  // A write that had to fetch the line takes effect when the line arrives (others' loads
  // completing before then still return the old value).
  if (cost > base) g.sync(*t);
  if (!t->recording) s.faults().on_access(*t);
}

void written(const void* addr) {
  Simulation* s = tl_ctx.sim;
  if (s == nullptr) return;
  Line* l = s->coherence().find(line_key(addr));
  if (l == nullptr) return;
  ++l->version;
  if (l->watchers == nullptr) return;
  Coherence::notify(*l, [](void* w) {
    Task* t = static_cast<Task*>(w);
    t->guest->watcher_fired(*t);
  });
}

}  // namespace pvlock::sim::mem
