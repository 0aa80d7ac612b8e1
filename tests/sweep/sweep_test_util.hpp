// SPDX-License-Identifier: GPL-2.0-only
// Helpers for the sweep tests: a temporary directory with a small scenario, and a fake
// simulator whose result is a deterministic function of the scenario.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "scenario/scenario.hpp"

namespace pvlock::sweep::testing {

inline constexpr const char* kScenario = R"([run]
duration_ms = 20
warmup_ms = 2
seed = 10
[host]
[[vm]]
vcpus = 2
[vm.guest]
lock = "tas"
[vm.workload]
type = "lockloop"
)";

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("pvlock-sweep-test-" + std::to_string(getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name)) << text;
    return file(name);
  }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

// score = seed * 1000 + count * 10 + vcpus, one VM entry per VmSpec; a "perf" member that
// differs between calls.
inline nlohmann::ordered_json fake_run(const scenario::Scenario& sc) {
  static std::atomic<int> calls{0};
  nlohmann::ordered_json j;
  j["scenario"] = sc.name;
  j["seed"] = sc.run.seed;
  nlohmann::ordered_json vms = nlohmann::ordered_json::array();
  for (const auto& v : sc.vms)
    vms.push_back({{"name", v.name},
                   {"lock", v.guest.lock_name},
                   {"score", static_cast<double>(sc.run.seed) * 1000 + v.count * 10 + v.vcpus},
                   {"unit", "ops/s"}});
  j["vms"] = vms;
  j["perf"] = {{"wall_s", ++calls}};
  return j;
}

inline std::size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::string l;
  std::size_t n = 0;
  while (std::getline(in, l)) ++n;
  return n;
}

}  // namespace pvlock::sweep::testing
