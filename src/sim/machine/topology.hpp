// SPDX-License-Identifier: GPL-2.0-only
// Physical CPU topology: sockets x cores x SMT threads, numbered like Linux enumerates a
// typical two-socket Xeon (cpu = (socket * cores + core) * threads + thread here, which is a
// numbering choice, not a claim; only the distance classes matter to the cost model).
#pragma once

#include <cstdint>
#include <vector>

#include "scenario/scenario.hpp"

namespace pvlock::sim {

// How far a cache line travels between two CPUs (docs/costs.md).
enum class Distance : std::uint8_t { self, smt, socket, remote };

class Topology {
 public:
  explicit Topology(const scenario::MachineSpec& m)
      : sockets_(m.sockets), cores_(m.cores_per_socket), threads_(m.threads_per_core) {
    const int n = cpus();
    socket_.resize(static_cast<std::size_t>(n));
    core_.resize(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) {
      socket_[static_cast<std::size_t>(c)] = c / (cores_ * threads_);
      core_[static_cast<std::size_t>(c)] = c / threads_;
    }
  }
  int cpus() const { return sockets_ * cores_ * threads_; }
  int sockets() const { return sockets_; }
  int socket_of(int cpu) const { return socket_[static_cast<std::size_t>(cpu)]; }
  int core_of(int cpu) const { return core_[static_cast<std::size_t>(cpu)]; }
  Distance distance(int a, int b) const {
    if (a == b) return Distance::self;
    if (core_of(a) == core_of(b)) return Distance::smt;
    if (socket_of(a) == socket_of(b)) return Distance::socket;
    return Distance::remote;
  }

 private:
  int sockets_, cores_, threads_;
  std::vector<int> socket_, core_;
};

}  // namespace pvlock::sim
