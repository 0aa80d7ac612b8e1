// SPDX-License-Identifier: GPL-2.0-only
// The host counters come from one list (PVLOCK_HOST_COUNTERS): its JSON pointers are distinct
// (two fields under one key would hide one), and every one of them is in a KVM run's "host"
// object and in each VM's, where the list's order is the JSON's order.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/host/scenario_run.hpp"
#include "sim/host_counters.hpp"

namespace pvlock::sim::test {
namespace {

std::vector<std::string> pointers() {
  std::vector<std::string> out;
#define PVLOCK_POINTER(field, type, pointer, meaning) out.emplace_back(pointer);
  PVLOCK_HOST_COUNTERS(PVLOCK_POINTER)
#undef PVLOCK_POINTER
  return out;
}

TEST(HostCountersJson, PointersAreDistinct) {
  const auto all = pointers();
  EXPECT_GT(all.size(), 30u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size());
}

TEST(HostCountersJson, EveryCounterIsInTheRunJsonInListOrder) {
  const auto j = run_file(std::string(PVLOCK_SOURCE_DIR) + "/examples/overcommit-lockloop.toml",
                          {"run.duration_ms=20", "run.warmup_ms=5"});
  std::vector<const nlohmann::ordered_json*> hosts{&j.at("host")};
  for (const auto& vm : j.at("vms")) hosts.push_back(&vm.at("host"));
  for (const auto* h : hosts) {
    std::string prev_top;
    std::vector<std::string> tops;
    for (const std::string& p : pointers()) {
      const nlohmann::ordered_json::json_pointer ptr(p);
      ASSERT_TRUE(h->contains(ptr)) << p;
      EXPECT_TRUE(h->at(ptr).is_number_integer()) << p;
      const std::string top = p.substr(1, p.find('/', 1) - 1);
      if (top != prev_top) tops.push_back(top);
      prev_top = top;
    }
    // The first keys of the object are the list's top-level keys, in the list's order.
    std::size_t k = 0;
    for (auto it = h->begin(); it != h->end() && k < tops.size(); ++it, ++k)
      EXPECT_EQ(it.key(), tops[k]);
    EXPECT_EQ(k, tops.size());
  }
  EXPECT_GT(j.at("host").at("exits").at("hlt").get<double>(), 0.0);
}

}  // namespace
}  // namespace pvlock::sim::test
