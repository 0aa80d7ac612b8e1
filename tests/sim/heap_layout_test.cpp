// SPDX-License-Identifier: GPL-2.0-only
// Results must not depend on where the heap or a fiber's stack puts an object. The coherence
// model keys cache lines by address (as hardware does), so an on-stack or heap lock record
// that straddles two lines in one build and not in another would make the same scenario and
// seed give other figures after an unrelated change. Every run here is repeated with the heap
// and the fiber stacks shifted by multiples of 16 bytes (what a different build or frame
// layout does) and must give the same bytes outside "perf".
//
// What stays address-dependent on purpose: the PV lock hash hashes the lock's address, as the
// kernel's hash_ptr() does; the locks in these scenarios live in 64-byte-aligned storage, so
// the shifts here do not move them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/run.hpp"
#include "heap_hooks.hpp"
#include "scenario/parse.hpp"
#include "sim/engine/fiber_stack.hpp"
#include "sim_helpers.hpp"

namespace pvlock::sim {
namespace {

struct Layout {
  std::size_t heap;
  std::size_t stack;
};

std::string run_with(const Layout& l, const std::string& file,
                     const std::vector<std::string>& sets) {
  testing::set_heap_skew(l.heap);
  set_fiber_stack_skew(l.stack);
  // Loaded under the skew too: the scenario's own objects are part of the layout.
  nlohmann::ordered_json j = harness::run_to_json(
      scenario::load_scenario_file(std::string(PVLOCK_SOURCE_DIR) + "/" + file, sets));
  testing::set_heap_skew(0);
  set_fiber_stack_skew(0);
  j.erase("perf");
  return j.dump();
}

struct Case {
  const char* file;
  std::vector<std::string> sets;
};

std::vector<Case> cases() {
  const std::vector<std::string> short3vm = {"run.duration_ms=8", "run.warmup_ms=4"};
  auto with = [](std::vector<std::string> v, std::initializer_list<const char*> more) {
    for (const char* m : more) v.emplace_back(m);
    return v;
  };
  std::vector<Case> c = {
      {"experiments/seed000/ebizzy-3vm.toml", short3vm},
      {"experiments/seed000/ebizzy-3vm.toml",
       with(short3vm, {"vm[0].guest.wait_early=prev_halted_or_preempted"})},
      {"experiments/seed001/ebizzy.toml", short3vm},
      {"experiments/seed002/lock2-pinned.toml", {"run.duration_ms=2", "run.warmup_ms=1"}},
      {"experiments/seed003/messaging.toml", {"run.duration_ms=20", "run.warmup_ms=5"}},
      {"experiments/seed004/fio.toml",
       {"run.duration_ms=20", "run.warmup_ms=5", "vm[0].guest.vcpu_is_preempted_ns=8"}},
      {"experiments/seed004/fio.toml",
       {"run.duration_ms=20", "run.warmup_ms=5", "vm[0].guest.vcpu_is_preempted_ns=30"}},
  };
  // Every lock family on the over-committed lock loop (on-stack MCS nodes, mutex and rwsem
  // waiters).
  for (const char* lock : {"tas", "ticket", "mcs", "qspinlock", "pvqspinlock", "mutex", "rwsem"})
    c.push_back({"examples/overcommit-lockloop.toml",
                 {"run.duration_ms=10", std::string("vm[0].guest.lock=") + lock}});
#ifdef PVLOCK_KERNEL_LOCKS
  // The kernel's own qspinlock.c: its per-CPU qnodes and hash table live in the shim's
  // per-VM storage.
  for (const char* lock : {"kernel:qspinlock", "kernel:pvqspinlock"})
    c.push_back({"examples/overcommit-lockloop.toml",
                 {"run.duration_ms=10", std::string("vm[0].guest.lock=") + lock}});
#endif
  return c;
}

// Where two result documents first differ, with a little context: the whole document would
// bury the place.
std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i < 60 ? 0 : i - 60;
  return "at byte " + std::to_string(i) + ": ..." + a.substr(from, 120) + "... vs ..." +
         b.substr(from, 120) + "...";
}

TEST(Layout, DoesNotChangeResults) {
  const Layout plain{0, 0};
  const Layout shifted[] = {{16, 16}, {48, 32}, {32, 112}};
  for (const Case& c : cases()) {
    std::string where = c.file;
    for (const auto& s : c.sets) where += " " + s;
    const std::string want = run_with(plain, c.file, c.sets);
    for (const Layout& l : shifted) {
      const std::string got = run_with(l, c.file, c.sets);
      EXPECT_TRUE(got == want) << where << " (heap +" << l.heap << ", stacks +" << l.stack << ") "
                               << first_difference(got, want);
    }
  }
}

}  // namespace
}  // namespace pvlock::sim
