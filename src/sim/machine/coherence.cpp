// SPDX-License-Identifier: GPL-2.0-only
#include "sim/machine/coherence.hpp"

#include <algorithm>

namespace pvlock::sim {

namespace {
constexpr int kInitialLog2 = 12;
}

Coherence::Coherence(const Topology& topo, const scenario::Costs& c)
    : topo_(topo),
      l1_hit_(c.l1_hit_ns),
      atomic_local_(c.atomic_local_ns),
      xfer_smt_(c.xfer_smt_ns),
      xfer_socket_(c.xfer_socket_ns),
      xfer_remote_(c.xfer_remote_ns) {
  table_.resize(std::size_t{1} << kInitialLog2);
  shift_ = 64 - kInitialLog2;
}

double Coherence::transfer(int from, int to) const {
  switch (topo_.distance(from, to)) {
    case Distance::self:
      return l1_hit_;
    case Distance::smt:
      return xfer_smt_;
    case Distance::socket:
      return xfer_socket_;
    case Distance::remote:
      return xfer_remote_;
  }
  return xfer_remote_;
}

Line* Coherence::find(std::uint64_t key) {
  const std::size_t mask = table_.size() - 1;
  for (std::size_t i = slot(key);; i = (i + 1) & mask) {
    Line& l = table_[i];
    if (l.key == key) return &l;
    if (l.key == Line::kEmpty) return nullptr;
  }
}

Line& Coherence::line(std::uint64_t key) {
  const std::size_t mask = table_.size() - 1;
  for (std::size_t i = slot(key);; i = (i + 1) & mask) {
    Line& l = table_[i];
    if (l.key == key) return l;
    if (l.key == Line::kEmpty) {
      if (2 * (used_ + 1) > table_.size()) {
        grow();
        return line(key);
      }
      l.key = key;
      ++used_;
      return l;
    }
  }
}

void Coherence::grow() {
  std::vector<Line> old(table_.size() * 2);
  old.swap(table_);
  --shift_;
  const std::size_t mask = table_.size() - 1;
  for (Line& l : old) {
    if (l.key == Line::kEmpty) continue;
    std::size_t i = slot(l.key);
    while (table_[i].key != Line::kEmpty) i = (i + 1) & mask;
    table_[i] = l;
    // The watcher list's first node points back at the head field, which moved.
    if (table_[i].watchers != nullptr) table_[i].watchers->pprev = &table_[i].watchers;
  }
}

double Coherence::load(Line& l, int cpu) {
  if (l.owner == cpu || l.sharers.has(cpu)) return l1_hit_;
  double cost = l1_hit_;
  if (l.owner >= 0) {
    // The owner supplies the data and keeps a Shared copy.
    cost = transfer(l.owner, cpu);
    l.sharers.add(l.owner);
    l.owner = -1;
  } else if (l.last_writer >= 0) {
    cost = transfer(l.last_writer, cpu);
  }
  l.sharers.add(cpu);
  return cost;
}

double Coherence::write(Line& l, int cpu, bool rmw) {
  const double base = rmw ? atomic_local_ : l1_hit_;
  double cost = base;
  if (l.owner != cpu) {
    double fetch = 0;
    if (l.owner >= 0) {
      fetch = transfer(l.owner, cpu);
    } else {
      // Invalidate every other sharer; the farthest acknowledgement bounds the latency.
      l.sharers.for_each([&](int s) {
        if (s != cpu) fetch = std::max(fetch, transfer(s, cpu));
      });
      if (!l.sharers.has(cpu) && l.last_writer >= 0 && l.last_writer != cpu)
        fetch = std::max(fetch, transfer(l.last_writer, cpu));
    }
    cost += fetch;
  }
  l.owner = static_cast<std::int16_t>(cpu);
  l.last_writer = static_cast<std::int16_t>(cpu);
  l.sharers.clear();
  return cost;
}

void Coherence::watch(Line& l, WatchNode& n) {
  n.next = l.watchers;
  if (n.next != nullptr) n.next->pprev = &n.next;
  n.pprev = &l.watchers;
  l.watchers = &n;
}

void Coherence::unwatch(WatchNode& n) {
  if (n.pprev == nullptr) return;
  *n.pprev = n.next;
  if (n.next != nullptr) n.next->pprev = n.pprev;
  n.next = nullptr;
  n.pprev = nullptr;
}

}  // namespace pvlock::sim
