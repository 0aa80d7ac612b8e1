// SPDX-License-Identifier: GPL-2.0-only
// kvm_vcpu_on_spin()'s target choice (src/sim/host/directed_yield.hpp) on hand-made vCPU
// states: round robin from last_boosted, the skip rules, the dy_eligible alternation, the
// budget of three -ESRCH failures, and the two passes; and how long a spinner's "in a spin
// loop" mark lasts under the simulator's rule and the kernel's (SpinLoopState).
#include "sim/host/directed_yield.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "sim/engine/rng.hpp"

namespace pvlock::sim::host {
namespace {

constexpr int kN = 6;

struct Vm {
  std::array<DyView, kN> view{};
  std::array<SpinLoopState, kN> spin{};
  std::array<YieldResult, kN> result{};
  std::vector<int> tried;

  Vm() {
    for (auto& v : view) v = DyView{true, true, true, false};
    result.fill(YieldResult::yielded);
  }
  int pick(int me, int last, bool kernel_mode = true, bool preempted_only = true) {
    tried.clear();
    return pick_directed_yield(
        kN, me, last, kernel_mode, preempted_only,
        [&](int i) { return view[static_cast<std::size_t>(i)]; },
        [&](int i) { return spin[static_cast<std::size_t>(i)].looked_at(); },
        [&](int i) {
          tried.push_back(i);
          return result[static_cast<std::size_t>(i)];
        });
  }
};

TEST(DirectedYield, RoundRobinStartsAfterLastBoostedAndSkipsSelf) {
  Vm vm;
  EXPECT_EQ(vm.pick(/*me=*/3, /*last=*/2), 4);  // 3 is us
  EXPECT_EQ(vm.pick(/*me=*/0, /*last=*/5), 1);  // wraps around, skips us (0)
}

TEST(DirectedYield, SkipsNotReadyBlockedAndUserModeVcpus) {
  Vm vm;
  vm.view[1].ready = false;      // running, or not preempted
  vm.view[2].runnable = false;   // halted with nothing pending
  vm.view[3].in_kernel = false;  // preempted in user mode: holds no kernel lock
  EXPECT_EQ(vm.pick(0, 0), 4);
  EXPECT_TRUE(vm.tried == std::vector<int>{4});
  // ... unless an interrupt waits for it (on hosts with 52acd22faa1a), or the exit was in
  // user mode.
  vm.view[3].irq_pending = true;
  EXPECT_EQ(vm.pick(0, 0), 3);
  vm.view[3].irq_pending = false;
  EXPECT_EQ(vm.pick(0, 0, /*kernel_mode=*/false), 3);
}

TEST(DirectedYield, UserModeRuleAppliesOnlyToPreemptedVcpus) {
  Vm vm;
  // Woken from HLT and not yet running: ready, not preempted. Whatever its (stale) mode,
  // the user-mode rule does not look at it.
  vm.view[1].preempted = false;
  vm.view[1].in_kernel = false;
  EXPECT_EQ(vm.pick(0, 0), 1);
  // The same vCPU preempted in user mode is skipped, pending interrupt or not, when the
  // host does not exempt interrupts (irq_pending is then always false).
  vm.view[1].preempted = true;
  EXPECT_EQ(vm.pick(0, 0), 2);
  EXPECT_TRUE(vm.tried == std::vector<int>{2});
}

TEST(DirectedYield, BeforeTheInvoluntaryPreemptionCheckTheUserModeRuleAppliesToAll) {
  // Hosts before 046ddeed (v5.3): a vCPU woken from HLT is judged by the mode it was in at
  // its last involuntary preemption, and skipped if that was user mode.
  Vm vm;
  vm.view[1].preempted = false;
  vm.view[1].in_kernel = false;
  EXPECT_EQ(vm.pick(0, 0, true, /*preempted_only=*/false), 2);
  EXPECT_TRUE(vm.tried == std::vector<int>{2});
  vm.view[1].in_kernel = true;  // last preempted in kernel mode: a candidate
  EXPECT_EQ(vm.pick(0, 0, true, false), 1);
  // A user-mode exit looks at nobody's mode, then as now.
  vm.view[1].in_kernel = false;
  EXPECT_EQ(vm.pick(0, 0, /*kernel_mode=*/false, false), 1);
}

TEST(DirectedYield, SpinningCandidateIsEligibleEveryOtherTime) {
  Vm vm;
  for (auto& v : vm.view) v.ready = false;
  vm.view[2].ready = true;
  vm.spin[2].handler_started();  // it took a PLE exit itself
  EXPECT_EQ(vm.pick(0, 0), -1);  // first look: not eligible (dy_eligible was false)
  EXPECT_EQ(vm.pick(0, 0), 2);   // second look: eligible
  EXPECT_EQ(vm.pick(0, 0), -1);
}

TEST(DirectedYield, GivesUpAfterThreeSingleTaskFailuresOnly) {
  Vm vm;
  // Ordinary failures (target running, or not a yield candidate) do not use the budget.
  vm.result = {YieldResult::failed, YieldResult::failed, YieldResult::failed,
               YieldResult::failed, YieldResult::failed, YieldResult::yielded};
  EXPECT_EQ(vm.pick(0, 0), 5);
  EXPECT_TRUE((vm.tried == std::vector<int>{1, 2, 3, 4, 5}));
  // Three -ESRCH failures end the search before vCPU 5 is tried.
  vm.result = {YieldResult::failed,       YieldResult::single_tasks, YieldResult::failed,
               YieldResult::single_tasks, YieldResult::single_tasks, YieldResult::yielded};
  EXPECT_EQ(vm.pick(0, 0), -1);
  EXPECT_TRUE((vm.tried == std::vector<int>{1, 2, 3, 4}));
}

TEST(DirectedYield, ASecondPassRunsOnlyIfTheFirstPassEndedWithoutAnEsrch) {
  // kvm_vcpu_on_spin() scans the vCPUs after last_boosted (pass 0), then 0..last_boosted
  // (pass 1) while `!yielded && try`: a -ESRCH (yielded < 0) from pass 0's last try ends
  // the search even with budget left; a plain failure (0) does not.
  Vm vm;
  vm.result = {YieldResult::yielded,      YieldResult::yielded, YieldResult::yielded,
               YieldResult::single_tasks, YieldResult::failed,  YieldResult::single_tasks};
  EXPECT_EQ(vm.pick(/*me=*/2, /*last=*/2), -1);
  EXPECT_TRUE((vm.tried == std::vector<int>{3, 4, 5}));
  vm.result[5] = YieldResult::failed;
  EXPECT_EQ(vm.pick(2, 2), 0);
  EXPECT_TRUE((vm.tried == std::vector<int>{3, 4, 5, 0}));
  // Our own slot ends pass 0 without a try: the last try decides.
  vm.result[4] = YieldResult::single_tasks;
  EXPECT_EQ(vm.pick(/*me=*/5, /*last=*/2), -1);
  EXPECT_TRUE((vm.tried == std::vector<int>{3, 4}));
}

// The rules as one loop over every vCPU, k = 1..n from last_boosted (kvm_vcpu_on_spin()'s
// own loop shape): the reference the two-pass, candidate-skipping scan must agree with.
template <class View, class Eligible, class TryYield>
int reference_pick(int n, int me, int last, bool kernel_mode, bool preempted_only, View view,
                   Eligible eligible, TryYield try_yield) {
  int budget = 3;
  bool last_single = false;
  for (int k = 1; k <= n; ++k) {
    const int i = (last + k) % n;
    if (i == 0 && k > 1 && last_single) return -1;
    if (i == me) continue;
    const DyView v = view(i);
    if (!v.ready || !v.runnable) continue;
    if ((v.preempted || !preempted_only) && kernel_mode && !v.in_kernel && !v.irq_pending) continue;
    if (!eligible(i)) continue;
    const YieldResult r = try_yield(i);
    last_single = r == YieldResult::single_tasks;
    if (r == YieldResult::yielded) return i;
    if (r == YieldResult::single_tasks && --budget == 0) return -1;
  }
  return -1;
}

TEST(DirectedYield, SkippingNonCandidatesChoosesAsTheFullScanDoes) {
  // Random VMs of up to 150 vCPUs (bitmaps of several words), random states and results:
  // the scan that jumps over vCPUs which cannot pass (not ready, or user mode without an
  // interrupt) makes the same tries, the same dy_eligible toggles and the same choice.
  Rng rng(42);
  for (int round = 0; round < 20000; ++round) {
    const int n = 1 + static_cast<int>(rng.below(150));
    const int me = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
    const int last = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
    const bool kernel_mode = rng.below(4) != 0;
    const bool preempted_only = rng.below(2) != 0;
    std::vector<DyView> view(static_cast<std::size_t>(n));
    std::vector<YieldResult> result(static_cast<std::size_t>(n));
    std::vector<SpinLoopState> spin_a(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < view.size(); ++i) {
      view[i] = DyView{rng.below(3) != 0, rng.below(5) != 0, rng.below(3) == 0, rng.below(6) == 0,
                       rng.below(4) != 0};
      result[i] = static_cast<YieldResult>(rng.below(3));
      spin_a[i].in_spin_loop = rng.below(3) == 0;
      spin_a[i].dy_eligible = rng.below(2) == 0;
    }
    std::vector<SpinLoopState> spin_b = spin_a;
    std::vector<int> tried_a, tried_b;
    const auto at = [](auto& v, int i) -> auto& { return v[static_cast<std::size_t>(i)]; };
    const int want = reference_pick(
        n, me, last, kernel_mode, preempted_only, [&](int i) { return at(view, i); },
        [&](int i) { return at(spin_a, i).looked_at(); },
        [&](int i) {
          tried_a.push_back(i);
          return at(result, i);
        });
    const auto may_pass = [&](int i) {
      const DyView& v = at(view, i);
      return v.ready &&
             (!kernel_mode || v.in_kernel || v.irq_pending || (preempted_only && !v.preempted));
    };
    const int got = pick_directed_yield(
        n, me, last, kernel_mode, preempted_only,
        [&](int i) {
          while (i < n && !may_pass(i)) ++i;
          return i;
        },
        [&](int i) { return at(view, i); }, [&](int i) { return at(spin_b, i).looked_at(); },
        [&](int i) {
          tried_b.push_back(i);
          return at(result, i);
        });
    ASSERT_EQ(got, want) << "round " << round;
    ASSERT_EQ(tried_b, tried_a) << "round " << round;
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(at(spin_b, i).dy_eligible, at(spin_a, i).dy_eligible) << "round " << round;
  }
}

// Three looks by other handlers: which of them find the vCPU eligible.
std::array<bool, 3> three_looks(SpinLoopState& s) {
  std::array<bool, 3> seen{};
  for (bool& e : seen) e = s.looked_at();
  return seen;
}

TEST(SpinLoopMark, TheSimulatorsMarkLastsUntilTheSpinEndsOrTheVcpuIsScheduledIn) {
  const bool handler_scope = false;
  SpinLoopState s;
  EXPECT_EQ(three_looks(s), (std::array<bool, 3>{true, true, true}));  // never took a PLE exit
  // A PLE exit whose handler returns to the still-running spinner keeps the mark: preempted
  // later (by the tick, say), it is eligible every other look.
  s.handler_started();
  s.handler_returned(handler_scope);
  EXPECT_EQ(three_looks(s), (std::array<bool, 3>{false, true, false}));
  // Scheduled in again: unmarked; dy_eligible keeps its last value for the next spin.
  s.scheduled_in(handler_scope);
  EXPECT_EQ(three_looks(s), (std::array<bool, 3>{true, true, true}));
  s.handler_started();
  EXPECT_EQ(three_looks(s), (std::array<bool, 3>{true, false, true}));
  s.spin_ended();
  EXPECT_TRUE(s.looked_at());
}

TEST(SpinLoopMark, TheKernelsMarkLastsOnlyWhileTheHandlerRuns) {
  const bool handler_scope = true;
  SpinLoopState s;
  // kvm_vcpu_on_spin() found no one to yield to, or yielded without losing its pCPU: the
  // handler ends, in_spin_loop and dy_eligible are cleared, and a spinner preempted after
  // that is eligible at every look.
  s.handler_started();
  s.handler_returned(handler_scope);
  EXPECT_EQ(three_looks(s), (std::array<bool, 3>{true, true, true}));
}

TEST(SpinLoopMark, UnderTheKernelsRuleAYielderWaitsMarkedAndStartsOverWhenScheduledIn) {
  const bool handler_scope = true;
  SpinLoopState s;
  // yield_to()'s schedule() took the pCPU: the vCPU waits in its run queue inside its own
  // handler, so other handlers find it eligible every other look...
  s.handler_started();
  EXPECT_EQ(three_looks(s), (std::array<bool, 3>{false, true, false}));
  // ... until it runs again and the handler returns, clearing dy_eligible: its next PLE exit
  // starts the alternation from "not eligible".
  s.scheduled_in(handler_scope);
  EXPECT_TRUE(s.looked_at());
  s.handler_started();
  EXPECT_EQ(three_looks(s), (std::array<bool, 3>{false, true, false}));
}

}  // namespace
}  // namespace pvlock::sim::host
