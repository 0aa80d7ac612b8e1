// SPDX-License-Identifier: GPL-2.0-only
// Task programs ([workload] type = "program"): every class of mistake is an error at its
// file:line:col; a program that restates the lock loop gives the lock loop's results byte
// for byte; fork/exec/exit/reap, wait queues, pipes, sleeps and IPIs run deterministically.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.hpp"
#include "scenario/parse.hpp"

namespace pvlock::workload {
namespace {

const std::string kHead = R"([run]
duration_ms = 3
warmup_ms = 1
[machine]
cores_per_socket = 2
[workload]
type = "program"
)";

std::string error_of(const std::string& body) {
  try {
    (void)scenario::parse_scenario(kHead + body, "t.toml");
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "";
}

nlohmann::ordered_json run(const std::string& text) {
  return harness::run_to_json(scenario::parse_scenario(text, "t.toml"));
}

// A valid program around `steps` (one group, one task per vCPU).
std::string with_steps(const std::string& steps, const std::string& extra = "") {
  return "[workload.locks]\nl = \"spinlock\"\nm = \"mutex\"\nr = \"rwsem\"\n"
         "[workload.queues]\nq = true\n[workload.score]\nrate = \"ops\"\n" +
         extra + "[[workload.group]]\nname = \"g\"\ntasks_per_vcpu = 1\nprogram = [\n" + steps +
         "\n{ count = \"ops\" },\n]\n";
}

struct ErrorCase {
  const char* steps;
  const char* where;    // "line:col" of the error
  const char* message;  // part of the message
};

TEST(ProgramErrors, EveryClassNamesItsPlace) {
  // Lines: kHead has 7, with_steps puts the first step on line 7 + 12 = 19 + 1.
  const ErrorCase cases[] = {
      {"{ compute = 1, lock = \"l\" },", "t.toml:20:", "does one thing"},
      {"{ frobnicate = 1 },", "t.toml:20:", "needs one operation key"},
      {"{ lock = \"nope\" }, { unlock = \"nope\" },", "t.toml:20:", "no lock named 'nope'"},
      {"{ unlock = \"l\" },", "t.toml:20:", "not held here"},
      {"{ lock = \"l\" }, { lock = \"l\" }, { unlock = \"l\" },", "t.toml:20:", "already held"},
      {"{ lock = \"l\" },", "t.toml:20:", "still held when the program ends"},
      {"{ lock = \"l\" }, { lock = \"m\" }, { unlock = \"m\" }, { unlock = \"l\" },",
       "t.toml:20:", "sleeping in atomic context"},
      {"{ lock = \"l\" }, { sleep = 5 }, { unlock = \"l\" },",
       "t.toml:20:", "sleeping in atomic context"},
      {"{ lock = \"m\", irqs_off = true }, { unlock = \"m\" },",
       "t.toml:20:", "only a spinlock is taken with IRQs off"},
      {"{ lock = \"l\", mode = \"read\" }, { unlock = \"l\" },",
       "t.toml:20:", "only an rwsem has read and write modes"},
      {"{ loop = 3 },", "t.toml:20:", "has no { end = true }"},
      {"{ end = true },", "t.toml:20:", "without a loop"},
      {"{ loop = 2 }, { lock = \"l\" }, { end = true }, { unlock = \"l\" },",
       "t.toml:20:", "must release what it takes"},
      {"{ loop = 0 }, { compute = 1 }, { end = true },", "t.toml:21:", "never runs"},
      {"{ wait = \"q\" },", "t.toml:20:", "no step wakes queue 'q'"},
      {"{ fork = \"g\" },", "t.toml:20:", "no task slots to fork into: give it max = "},
      {"{ reap = 1 },", "t.toml:20:", "never forks"},
      {"{ vfork = \"g\" },", "t.toml:20:", "no task slots to fork into"},
      {"{ compute = -5 },", "t.toml:20:", "must be in [0, 1e12]"},
      {"{ compute = { dist = \"exp\" } },", "t.toml:20:", "required key 'mean'"},
      {"{ lock = \"l\", irqs_off = true }, { shootdown = \"others\" }, { unlock = \"l\" },",
       "t.toml:20:", "IPIs with IRQs off"},
      {"{ ipi = [0, 0] },", "t.toml:20:", "listed twice"},
      {"{ compute = 1, colour = \"red\" },", "t.toml:20:", "unknown key 'colour'"},
  };
  for (const ErrorCase& c : cases) {
    const std::string e = error_of(with_steps(c.steps));
    EXPECT_NE(e.find(c.where), std::string::npos) << c.steps << "\n -> " << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << c.steps << "\n -> " << e;
  }
}

TEST(ProgramErrors, DeclarationsAndScore) {
  EXPECT_EQ(error_of(with_steps("{ compute = 1 },")), "");
  // Unknown lock kind, listing the kinds.
  std::string e = error_of("[workload.locks]\nx = \"spinny\"\n");
  EXPECT_NE(e.find("t.toml:9:"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown lock kind 'spinny'; kinds: spinlock"), std::string::npos) << e;
  // A score naming a counter no step counts.
  e = error_of(
      with_steps("{ compute = 1 },")
          .replace(with_steps("{ compute = 1 },").find("rate = \"ops\""), 12, "rate = \"opz\""));
  EXPECT_NE(e.find("no step counts 'opz'; counters: ops"), std::string::npos) << e;
  // No group, no score, no starting task.
  EXPECT_NE(error_of("").find("needs at least one [[workload.group]]"), std::string::npos);
  e = error_of("[[workload.group]]\nname = \"a\"\ntasks = 1\nprogram = [{ count = \"x\" }]\n");
  EXPECT_NE(e.find("needs a [workload.score]"), std::string::npos) << e;
  e = error_of(
      "[workload.score]\nrate = \"x\"\n[[workload.group]]\nname = \"a\"\nmax = 1\n"
      "program = [{ count = \"x\" }]\n");
  EXPECT_NE(e.find("nothing would run"), std::string::npos) << e;
  e = error_of(
      "[workload.score]\nwall = \"x\"\n[[workload.group]]\nname = \"a\"\ntasks = 1\n"
      "program = [{ count = \"x\" }]\n");
  EXPECT_NE(e.find("required key 'jobs'"), std::string::npos) << e;
  e = error_of(
      "[workload.score]\nlatency = \"s\"\npercentile = 100\n[[workload.group]]\nname = \"a\"\n"
      "tasks = 1\nprogram = [{ section = \"s\" }, { section_end = \"s\" }]\n");
  EXPECT_NE(e.find("must be in (0, 100)"), std::string::npos) << e;
  // A vfork child that never execs nor exits would keep its parent asleep for good.
  e = error_of(
      "[workload.score]\nrate = \"x\"\n[[workload.group]]\nname = \"a\"\ntasks = 1\n"
      "program = [{ vfork = \"c\" }, { count = \"x\" }]\n[[workload.group]]\nname = \"c\"\n"
      "max = 1\nprogram = [{ loop = 0 }, { compute = 1 }, { end = true }]\n");
  EXPECT_NE(e.find("t.toml:13:"), std::string::npos) << e;
  EXPECT_NE(e.find("group 'c' neither execs nor ends"), std::string::npos) << e;
  e = error_of(
      "[workload.score]\nrate = \"x\"\n[[workload.group]]\nname = \"a\"\ntasks = 1\n"
      "program = []\n");
  EXPECT_NE(e.find("t.toml:13:"), std::string::npos) << e;
  EXPECT_NE(e.find("at least one step"), std::string::npos) << e;
}

TEST(Program, RestatesTheLockLoopByteForByte) {
  const std::string head = R"([run]
duration_ms = 3
warmup_ms = 1
[machine]
cores_per_socket = 3
[guest]
lock = "pvqspinlock"
)";
  const auto a = run(head + R"([workload]
type = "lockloop"
compute_ns = { dist = "exp", mean = 500 }
hold_ns = 100
irqs_off = true
)");
  const auto b = run(head + R"([workload]
type = "program"
[workload.locks]
"lockloop.lock" = "spinlock"
[workload.score]
rate = "ops"
[[workload.group]]
name = "lockloop"
tasks_per_vcpu = 1
program = [
  { loop = 0 },
  { compute = { dist = "exp", mean = 500 } },
  { lock = "lockloop.lock", irqs_off = true },
  { compute = 100 },
  { unlock = "lockloop.lock" },
  { count = "ops" },
  { end = true },
]
)");
  auto strip = [](nlohmann::ordered_json j) {
    j.erase("perf");
    j.erase("scenario");
    for (const char* k : {"ops", "per_task", "counters", "sections"}) j["vms"][0].erase(k);
    return j.dump();
  };
  EXPECT_GT(a["vms"][0]["score"].get<double>(), 0);
  EXPECT_EQ(strip(a), strip(b));
}

const char* kProcesses = R"([run]
duration_ms = 20
warmup_ms = 1
[machine]
cores_per_socket = 4
[workload]
type = "program"
[workload.locks]
dcache = "spinlock"
[workload.queues]
done = true
[workload.pipes]
p = 4
[workload.score]
wall = "jobs"
jobs = 12
[[workload.group]]
name = "make"
tasks = 1
program = [
  { loop = 12 }, { fork = "cc" }, { end = true },
  { reap = "all" },
  { loop = 0 }, { sleep = 100000 }, { end = true },
]
[[workload.group]]
name = "cc"
max = 3
program = [
  { exec = 20000 },
  { fault = 1000, n = 10 },
  { lock = "dcache" }, { compute = 200 }, { unlock = "dcache" },
  { write = "p" },
  { compute = { dist = "exp", mean = 50000 } },
  { shootdown = "others" },
  { sleep = 5000 },
  { count = "jobs" },
]
[[workload.group]]
name = "reader"
tasks = 1
program = [{ loop = 0 }, { read = "p" }, { end = true }]
)";

TEST(Program, ForkExecExitReapIsDeterministic) {
  const auto a = run(kProcesses);
  const auto b = run(kProcesses);
  const auto& vm = a["vms"][0];
  EXPECT_EQ(vm["unit"], "ms");
  EXPECT_GT(vm["score"].get<double>(), 0.05);  // 12 jobs of >= 50 us on 3 slots
  EXPECT_EQ(vm["counters"]["jobs"]["total"], 12);
  EXPECT_EQ(vm["job"]["jobs"], 12);
  auto strip = [](nlohmann::ordered_json j) {
    j.erase("perf");
    return j.dump();
  };
  EXPECT_EQ(strip(a), strip(b));
}

// max_per_vcpu = 1 on this machine's 4 vCPUs is max = 4, slot for slot: the same bytes.
TEST(Program, MaxPerVcpuIsMaxTimesTheVcpus) {
  std::string fixed = kProcesses, per_vcpu = kProcesses;
  fixed.replace(fixed.find("max = 3"), 7, "max = 4");
  per_vcpu.replace(per_vcpu.find("max = 3"), 7, "max_per_vcpu = 1");
  auto strip = [](nlohmann::ordered_json j) {
    j.erase("perf");
    return j.dump();
  };
  const auto a = run(fixed);
  EXPECT_EQ(strip(a), strip(run(per_vcpu)));
  EXPECT_NE(strip(a), strip(run(kProcesses)));  // 4 slots are not 3
  // Both add up; the range is checked at the key.
  std::string both = kProcesses;
  both.replace(both.find("max = 3"), 7, "max = 2\nmax_per_vcpu = 1");
  EXPECT_EQ(run(both)["vms"][0]["job"]["jobs"], 12);
  std::string bad = kProcesses;
  bad.replace(bad.find("max = 3"), 7, "max_per_vcpu = 65");
  try {
    (void)run(bad);
    FAIL() << "expected an error";
  } catch (const scenario::ScenarioError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("t.toml:27:"), std::string::npos) << m;
    EXPECT_NE(m.find("workload.group[1].max_per_vcpu"), std::string::npos) << m;
  }
}

// A parent forking into four slots children that exec after 200 us: with fork it has four
// at once, with vfork it sleeps until each child's exec (or, for a child that never execs,
// its exit), so it starts at most one per 200 us.
std::string forker(const char* how, const char* child) {
  return std::string(R"([run]
duration_ms = 5
warmup_ms = 1
[machine]
cores_per_socket = 4
[workload]
type = "program"
[workload.score]
rate = "ops"
[[workload.group]]
name = "parent"
tasks = 1
program = [{ loop = 0 }, { )") +
         how + R"( = "c" }, { count = "ops" }, { end = true }]
[[workload.group]]
name = "c"
max = 4
program = )" +
         child + "\n";
}

TEST(Program, VforkParentWaitsForTheExecOrExit) {
  const char* execs =
      "[{ fault = 1000, n = 3 }, { compute = 200000 }, { exec = 1000 }, "
      "{ compute = 10000 }]";
  auto ops = [](const nlohmann::ordered_json& j) {
    return j["vms"][0]["counters"]["ops"]["total"].get<std::uint64_t>();
  };
  const auto forked = run(forker("fork", execs));
  const auto vforked = run(forker("vfork", execs));
  EXPECT_GT(ops(vforked), 0u);
  EXPECT_LT(2 * ops(vforked), ops(forked)) << ops(vforked) << " vs " << ops(forked);
  // 5 ms, one child per >= 200 us.
  EXPECT_LE(ops(vforked), 25u);
  // A child that only computes and exits releases its parent at the exit.
  const auto exits = run(forker("vfork", "[{ compute = 200000 }]"));
  EXPECT_GT(ops(exits), 0u);
  EXPECT_LE(ops(exits), 25u);
  auto strip = [](nlohmann::ordered_json j) {
    j.erase("perf");
    return j.dump();
  };
  EXPECT_EQ(strip(vforked), strip(run(forker("vfork", execs))));
}

TEST(Program, WallScoreOfAnUnfinishedJobIsAnError) {
  std::string s = kProcesses;
  s.replace(s.find("jobs = 12"), 9, "jobs = 13");
  try {
    (void)run(s);
    FAIL() << "expected an error";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("was not done by the end of the run"), std::string::npos)
        << e.what();
  }
}

TEST(Program, WakeLatencyPercentiles) {
  const auto j = run(R"([run]
duration_ms = 10
warmup_ms = 1
[machine]
cores_per_socket = 4
[workload]
type = "program"
[workload.queues]
work = true
[workload.score]
latency = "wakeup"
percentile = 99
[[workload.group]]
name = "message"
tasks = 1
program = [{ loop = 0 }, { sleep = 20000 }, { wake = "work", n = 3 }, { end = true }]
[[workload.group]]
name = "worker"
tasks = 3
program = [{ loop = 0 }, { wait = "work", latency = "wakeup" }, { compute = 5000 },
           { count = "ops" }, { end = true }]
)");
  const auto& s = j["vms"][0]["sections"]["wakeup"];
  EXPECT_GT(s["samples"].get<int>(), 100);
  EXPECT_GT(s["p50_us"].get<double>(), 0);
  EXPECT_GE(s["p99_us"].get<double>(), s["p50_us"].get<double>());
  EXPECT_EQ(j["vms"][0]["unit"], "us (p99)");
}

}  // namespace
}  // namespace pvlock::workload
