// SPDX-License-Identifier: GPL-2.0-only
// What the running kernel says about this machine, without measuring: CPU topology from
// sysfs (/sys/devices/system/cpu/cpuN/topology), the scheduler's tunables where readable
// (/proc/sys/kernel/sched_*, /sys/kernel/debug/sched/*), CONFIG_HZ from /proc/config.gz or
// /boot/config-$(uname -r), and the steal time in /proc/stat.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pvlock::calibrate {

struct CpuTopo {
  int cpu = 0;
  int package = 0;
  int core = 0;
  std::vector<int> siblings;  // thread_siblings_list, this CPU included
};

struct Topology {
  std::vector<CpuTopo> cpus;  // online CPUs this process may run on, ascending
  int sockets = 1;
  int cores_per_socket = 1;
  int threads_per_core = 1;
  // False when the CPUs do not form sockets x cores x threads (then the three counts are the
  // nearest description: sockets seen, max cores in one, max threads in one core).
  bool uniform = true;
};

// Reads the topology of the CPUs in the process's affinity mask.
Topology read_topology();

// The CPUs of `t` for each line-transfer class, as a pair (a, b), or nullopt if the machine
// has no such pair: SMT siblings, two cores of one socket, two sockets.
struct CpuPair {
  int a = 0;
  int b = 0;
};
std::optional<CpuPair> smt_pair(const Topology& t);
std::optional<CpuPair> socket_pair(const Topology& t);
std::optional<CpuPair> remote_pair(const Topology& t);

struct KernelFacts {
  std::string release;  // uname -r
  // "eevdf" for kernels >= 6.6 (the scheduler became EEVDF in v6.6), else "cfs".
  std::string scheduler;
  std::optional<int> config_hz;  // CONFIG_HZ, if the config is readable
  std::string config_source;     // which file gave it
  // Every readable scheduler tunable, path -> value as written there.
  std::map<std::string, std::string> sched_tunables;
  // /sys/kernel/debug/sched/base_slice_ns (EEVDF) or min_granularity_ns (CFS), if readable.
  std::optional<std::int64_t> debugfs_slice_ns;
};

KernelFacts read_kernel_facts();

// Sum of all CPUs' /proc/stat "cpu" jiffies and of their steal column.
struct CpuTimes {
  std::uint64_t total = 0;
  std::uint64_t steal = 0;
  bool valid = false;
};
CpuTimes read_cpu_times();
// Fraction of CPU time stolen between two readings (0 if nothing elapsed or unreadable).
double steal_fraction(const CpuTimes& before, const CpuTimes& after);

}  // namespace pvlock::calibrate
