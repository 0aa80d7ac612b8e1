// SPDX-License-Identifier: GPL-2.0-only
#include "calibrate/system_facts.hpp"

#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace pvlock::calibrate {
namespace {

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<int> read_int(const std::string& path) {
  auto s = read_line(path);
  if (!s) return std::nullopt;
  try {
    return std::stoi(*s);
  } catch (...) {
    return std::nullopt;
  }
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}
std::vector<int> parse_cpu_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto dash = item.find('-');
    try {
      if (dash == std::string::npos) {
        out.push_back(std::stoi(item));
      } else {
        const int lo = std::stoi(item.substr(0, dash));
        const int hi = std::stoi(item.substr(dash + 1));
        for (int c = lo; c <= hi; ++c) out.push_back(c);
      }
    } catch (...) {
    }
  }
  return out;
}

// CONFIG_HZ=N from a kernel config text.
std::optional<int> hz_from_config(std::istream& in) {
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("CONFIG_HZ=", 0) == 0) {
      try {
        return std::stoi(line.substr(10));
      } catch (...) {
        return std::nullopt;
      }
    }
  return std::nullopt;
}

}  // namespace

Topology read_topology() {
  Topology t;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) CPU_SET(0, &set);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    CpuTopo ct;
    ct.cpu = c;
    ct.package = read_int(base + "physical_package_id").value_or(0);
    ct.core = read_int(base + "core_id").value_or(c);
    ct.siblings = parse_cpu_list(read_line(base + "thread_siblings_list").value_or(""));
    if (ct.siblings.empty()) ct.siblings = {c};
    t.cpus.push_back(ct);
  }
  std::map<int, std::set<int>> cores_of;          // package -> core ids
  std::map<std::pair<int, int>, int> threads_of;  // (package, core) -> threads
  for (const CpuTopo& c : t.cpus) {
    cores_of[c.package].insert(c.core);
    ++threads_of[{c.package, c.core}];
  }
  t.sockets = static_cast<int>(cores_of.size());
  t.cores_per_socket = 0;
  for (const auto& [pkg, cores] : cores_of)
    t.cores_per_socket = std::max(t.cores_per_socket, static_cast<int>(cores.size()));
  t.threads_per_core = 0;
  for (const auto& [key, n] : threads_of) t.threads_per_core = std::max(t.threads_per_core, n);
  t.uniform =
      t.sockets * t.cores_per_socket * t.threads_per_core == static_cast<int>(t.cpus.size());
  return t;
}

std::optional<CpuPair> smt_pair(const Topology& t) {
  for (const CpuTopo& c : t.cpus)
    for (const CpuTopo& d : t.cpus)
      if (c.cpu < d.cpu && c.package == d.package && c.core == d.core) return CpuPair{c.cpu, d.cpu};
  return std::nullopt;
}

std::optional<CpuPair> socket_pair(const Topology& t) {
  for (const CpuTopo& c : t.cpus)
    for (const CpuTopo& d : t.cpus)
      if (c.cpu < d.cpu && c.package == d.package && c.core != d.core) return CpuPair{c.cpu, d.cpu};
  return std::nullopt;
}

std::optional<CpuPair> remote_pair(const Topology& t) {
  for (const CpuTopo& c : t.cpus)
    for (const CpuTopo& d : t.cpus)
      if (c.cpu < d.cpu && c.package != d.package) return CpuPair{c.cpu, d.cpu};
  return std::nullopt;
}

KernelFacts read_kernel_facts() {
  KernelFacts k;
  utsname u{};
  if (uname(&u) == 0) k.release = u.release;
  int major = 0, minor = 0;
  std::sscanf(k.release.c_str(), "%d.%d", &major, &minor);
  k.scheduler = (major > 6 || (major == 6 && minor >= 6)) ? "eevdf" : "cfs";

  // /proc/config.gz through zcat (no zlib dependency for one line), else /boot/config-*.
  if (std::filesystem::exists("/proc/config.gz")) {
    if (FILE* p = popen("zcat /proc/config.gz 2>/dev/null", "r")) {
      std::string text;
      std::array<char, 4096> buf{};
      std::size_t n = 0;
      while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) text.append(buf.data(), n);
      pclose(p);
      std::istringstream in(text);
      if ((k.config_hz = hz_from_config(in))) k.config_source = "/proc/config.gz";
    }
  }
  if (!k.config_hz) {
    const std::string path = "/boot/config-" + k.release;
    std::ifstream in(path);
    if (in && (k.config_hz = hz_from_config(in))) k.config_source = path;
  }

  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/sys/kernel", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("sched_", 0) != 0) continue;
    if (auto v = read_line(e.path().string())) k.sched_tunables[e.path().string()] = *v;
  }
  for (const auto& e : std::filesystem::directory_iterator("/sys/kernel/debug/sched", ec)) {
    if (!e.is_regular_file(ec)) continue;
    if (auto v = read_line(e.path().string())) k.sched_tunables[e.path().string()] = *v;
  }
  for (const char* f :
       {"/sys/kernel/debug/sched/base_slice_ns", "/sys/kernel/debug/sched/min_granularity_ns"}) {
    if (auto v = read_line(f)) {
      try {
        k.debugfs_slice_ns = std::stoll(*v);
        break;
      } catch (...) {
      }
    }
  }
  return k;
}

CpuTimes read_cpu_times() {
  CpuTimes t;
  std::ifstream in("/proc/stat");
  std::string label;
  if (!(in >> label) || label != "cpu") return t;
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
  // counted in user, so the total is the first eight columns.
  for (int i = 0; i < 8; ++i) {
    std::uint64_t v = 0;
    if (!(in >> v)) return t;
    t.total += v;
    if (i == 7) t.steal = v;
  }
  t.valid = true;
  return t;
}

double steal_fraction(const CpuTimes& before, const CpuTimes& after) {
  if (!before.valid || !after.valid || after.total <= before.total) return 0;
  return static_cast<double>(after.steal - before.steal) /
         static_cast<double>(after.total - before.total);
}

}  // namespace pvlock::calibrate
