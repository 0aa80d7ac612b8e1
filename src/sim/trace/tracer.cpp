// SPDX-License-Identifier: GPL-2.0-only
#include "sim/trace/tracer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "sim/guest/guest.hpp"
#include "sim/guest/profile.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim::trace {

namespace {

constexpr int kHostPid = 1;
int guest_pid(int guest_index) { return 2 + guest_index; }

// Integer ns printed as µs with three decimals: exact, so the output is byte-identical.
std::string us(Time ns) {
  const char* sign = ns < 0 ? "-" : "";
  const Time a = ns < 0 ? -ns : ns;
  return fmt::format("{}{}.{:03d}", sign, a / 1000, static_cast<int>(a % 1000));
}

std::string escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}

enum Kind : std::uint64_t { kHaltedPv, kIdleHlt, kOff, kIdleLoop, kSpin, kTask };

}  // namespace

std::string Tracer::vcpu_name(const Vcpu& v) const {
  return guest_names_[static_cast<std::size_t>(v.guest->index())] + "/vcpu" + std::to_string(v.id);
}

void Tracer::attach(Simulation& sim) {
  const int pcpus = sim.topology().cpus();
  const bool host = sim.scenario().host.has_value();
  pcpus_.assign(host ? static_cast<std::size_t>(pcpus) : 0, Track{});
  vcpus_.assign(static_cast<std::size_t>(sim.vcpu_count()), Track{});
  off_.assign(static_cast<std::size_t>(sim.vcpu_count()), OffReason::entry);
  vcpu_pid_.assign(static_cast<std::size_t>(sim.vcpu_count()), 0);
  auto meta = [&](int pid, int tid, const char* what, const std::string& value, bool number) {
    metadata_.push_back(fmt::format(
        R"({{"ph":"M","pid":{},"tid":{},"name":"{}","args":{{"{}":{}}}}})", pid, tid, what,
        number ? "sort_index" : "name", number ? value : fmt::format(R"("{}")", escape(value))));
  };
  if (host) {
    meta(kHostPid, 0, "process_name", fmt::format("host ({} pCPUs)", pcpus), false);
    meta(kHostPid, 0, "process_sort_index", "0", true);
    for (int p = 0; p < pcpus; ++p) {
      meta(kHostPid, p + 1, "thread_name", fmt::format("pCPU {}", p), false);
      meta(kHostPid, p + 1, "thread_sort_index", std::to_string(p), true);
    }
  }
  for (auto& gp : sim.guests()) {
    Guest& g = *gp;
    guest_names_.push_back(g.name());
    const int pid = guest_pid(g.index());
    meta(pid, 0, "process_name",
         fmt::format("{} ({}, {} vCPUs)", g.name(), g.lock_name, g.vcpu_count()), false);
    meta(pid, 0, "process_sort_index", std::to_string(1 + g.index()), true);
    for (int i = 0; i < g.vcpu_count(); ++i) {
      const Vcpu& v = g.vcpu(i);
      vcpu_pid_[static_cast<std::size_t>(v.index)] = pid;
      meta(pid, i + 1, "thread_name", fmt::format("vCPU {}", i), false);
      meta(pid, i + 1, "thread_sort_index", std::to_string(i), true);
    }
  }
}

std::uint64_t Tracer::label_key(const Vcpu& v) const {
  if (v.halted) return v.curr != nullptr ? kHaltedPv : kIdleHlt;
  if (!v.running)
    return kOff | static_cast<std::uint64_t>(off_[static_cast<std::size_t>(v.index)]) << 8;
  if (v.curr == nullptr) return kIdleLoop;
  if (static_cast<int>(v.curr->sym) < kSpinSiteCount)
    return kSpin | static_cast<std::uint64_t>(v.curr->sym) << 8;
  return kTask | static_cast<std::uint64_t>(v.curr->id) << 8;
}

std::string Tracer::label(const Vcpu& v) const {
  switch (label_key(v) & 0xff) {
    case kHaltedPv:
      return "halted (pv_wait)";
    case kIdleHlt:
      return "idle (HLT)";
    case kOff:
      switch (off_[static_cast<std::size_t>(v.index)]) {
        case OffReason::preempted:
          return "preempted";
        case OffReason::woken:
          return "woken, waiting for pCPU";
        case OffReason::ple_exit:
          return "PLE exit";
        case OffReason::entry:
          return "VM entry";
      }
      return "off";
    case kIdleLoop:
      return "idle loop";
    case kSpin:
      return "spin: " + std::string(sym_name(v.curr->sym));
    default:
      return v.curr->name;
  }
}

void Tracer::close(Track& tr, int pid, int tid, Time now) {
  if (!tr.open) return;
  tr.open = false;
  const Time b = std::max(tr.since, window_.start);
  const Time e = std::min(now, window_.end);
  if (e <= b) return;  // outside the window, or empty
  events_.push_back(Event{b, e - b, pid, tid, std::move(tr.name), {}});
}

void Tracer::set_slice(Track& tr, int pid, int tid, std::uint64_t key, std::string name, Time now) {
  close(tr, pid, tid, now);
  tr.key = key;
  tr.since = now;
  tr.name = std::move(name);
  tr.open = true;
}

void Tracer::vcpu_update(const Vcpu& v, Time now) {
  const auto i = static_cast<std::size_t>(v.index);
  if (v.running) off_[i] = OffReason::entry;
  const std::uint64_t key = label_key(v);
  Track& tr = vcpus_[i];
  if (tr.open && tr.key == key) return;
  // Past the window nothing more is stored: keep the label work away from the hot path.
  if (now >= window_.end) {
    close(tr, vcpu_pid_[i], v.id + 1, now);
    tr.key = key;
    return;
  }
  set_slice(tr, vcpu_pid_[i], v.id + 1, key, label(v), now);
}

void Tracer::vcpu_off_reason(const Vcpu& v, OffReason r, Time now) {
  off_[static_cast<std::size_t>(v.index)] = r;
  vcpu_update(v, now);
}

void Tracer::pcpu_switch(int pcpu, const Vcpu* next, const char* other, Time now) {
  Track& tr = pcpus_[static_cast<std::size_t>(pcpu)];
  if (next == nullptr && other == nullptr) {
    close(tr, kHostPid, pcpu + 1, now);
    return;
  }
  // Keys: a vCPU's index, or the label's address for other host threads (literals).
  const std::uint64_t key = next != nullptr ? static_cast<std::uint64_t>(next->index)
                                            : reinterpret_cast<std::uintptr_t>(other);
  if (tr.open && tr.key == key) return;
  set_slice(tr, kHostPid, pcpu + 1, key, next != nullptr ? vcpu_name(*next) : std::string(other),
            now);
}

void Tracer::instant(const Vcpu& v, const char* name, Time now, const Vcpu* target,
                     const char* detail, const char* target_key) {
  if (!window_.contains(now)) return;
  std::string args;
  if (target != nullptr) args = fmt::format(R"("{}":"{}")", target_key, vcpu_name(*target));
  if (detail != nullptr) args += fmt::format(R"({}"detail":"{}")", args.empty() ? "" : ",", detail);
  events_.push_back(Event{now, -1, vcpu_pid_[static_cast<std::size_t>(v.index)], v.id + 1, name,
                          std::move(args)});
}

void Tracer::finish(Time now) {
  for (std::size_t p = 0; p < pcpus_.size(); ++p)
    close(pcpus_[p], kHostPid, static_cast<int>(p) + 1, now);
  // vCPU tracks: the global index maps back to (pid, tid) through vcpu_pid_ and the order
  // in which guests numbered their vCPUs (consecutive per guest).
  int first = 0;
  int prev_pid = -1;
  for (std::size_t i = 0; i < vcpus_.size(); ++i) {
    if (vcpu_pid_[i] != prev_pid) {
      prev_pid = vcpu_pid_[i];
      first = static_cast<int>(i);
    }
    close(vcpus_[i], vcpu_pid_[i], static_cast<int>(i) - first + 1, now);
  }
}

void Tracer::write(std::ostream& out) const {
  // Slices are stored when they end: order everything by start time (stable, so the order
  // is still a function of the run alone).
  std::vector<const Event*> order;
  order.reserve(events_.size());
  for (const Event& e : events_) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(),
                   [](const Event* a, const Event* b) { return a->ts < b->ts; });
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"window_start_us\":" << us(window_.start)
      << ",\"window_end_us\":" << (window_.end == kNever ? std::string("null") : us(window_.end))
      << "},\n\"traceEvents\":[\n";
  bool first = true;
  for (const std::string& m : metadata_) {
    out << (first ? "" : ",\n") << m;
    first = false;
  }
  for (const Event* e : order) {
    out << (first ? "" : ",\n");
    first = false;
    if (e->dur >= 0)
      out << fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"{}"}})", e->pid,
                         e->tid, us(e->ts), us(e->dur), escape(e->name));
    else
      out << fmt::format(
          R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":"{}","args":{{{}}}}})", e->pid,
          e->tid, us(e->ts), escape(e->name), e->args);
  }
  out << "\n]}\n";
}

}  // namespace pvlock::sim::trace
