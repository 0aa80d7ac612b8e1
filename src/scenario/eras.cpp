// SPDX-License-Identifier: GPL-2.0-only
// The era switch table (eras.hpp). Each step names the upstream commit that changed the
// behaviour and the first release that contained it; where this tree could not confirm a
// commit id, the step names the commit by its subject only.
#include "scenario/eras.hpp"

#include <fmt/core.h>

#include <charconv>

namespace pvlock::scenario::eras {

namespace {

using namespace std::string_view_literals;

constexpr Version kOldest{4, 2};
constexpr Version kNewest{6, 12};
// The last minor release of each major line the profiles cover (4.20 -> 5.0, 5.19 -> 6.0).
constexpr int kLastMinor4 = 20;
constexpr int kLastMinor5 = 19;

// ---- guest (kernel/locking, kernel/sched) ----

constexpr Step kWaitEarly[] = {
    {{4, 5}, "prev_halted"sv, "cd0272fab785 locking/pvqspinlock: Queue node adaptive spinning"},
    {{4, 11},
     "prev_halted_or_preempted"sv,
     "75437bb304b2 locking/pvqspinlock: Don't wait if vCPU is preempted"},
    {{5, 4},
     "prev_halted"sv,
     "89340d0935c9 Revert \"locking/pvqspinlock: Don't wait if vCPU is preempted\""},
};
// The first pvqspinlock (a23db284fe0d, v4.2) is the oldest value of these three.
constexpr Step kKickAtUnlock[] = {
    {{4, 3}, true, "75d2270280686 locking/pvqspinlock: Only kick CPU at unlock time"},
};
constexpr Step kLockStealing[] = {
    {{4, 5}, true, "1c4941fd53af locking/pvqspinlock: Allow limited lock stealing"},
};
constexpr Step kHybrid[] = {
    {{4, 8}, true, "11752adb locking/pvqspinlock: Implement hybrid PV queued/unfair locks"},
};
constexpr Step kOsqBreak[] = {
    {{4, 9},
     true,
     "locking/osq: Break out of spin-wait busy waiting loop for a preempted vCPU in "
     "osq_lock()"},
};
constexpr Step kOwnerSpinPreempt[] = {
    {{4, 9},
     std::int64_t{1},
     "locking/mutex: Break out of expensive busy-loop on {mutex,rwsem}_spin_on_owner() when "
     "owner vCPU is preempted"},
};
constexpr Step kMutexHandoff[] = {
    {{4, 10}, true, "9d659ae14b54 locking/mutex: Add lock handoff to avoid starvation"},
};
constexpr Step kMutexTrylock[] = {
    {{5, 15},
     "common"sv,
     "ad90880dc962 locking/mutex: Introduce __mutex_trylock_or_handoff() (with 048661a1f963 "
     "locking/mutex: Fix HANDOFF condition)"},
};
constexpr Step kRwsemHandoff[] = {
    {{5, 3}, true, "4f23dbc1e657 locking/rwsem: Implement lock handoff to prevent lock starvation"},
};
constexpr Step kRwsemReaderSpin[] = {
    {{5, 3}, true, "cf69482d62d9 locking/rwsem: Enable readers spinning on writer"},
    {{5, 11}, false, "617f3ef95177 locking/rwsem: Remove reader optimistic spinning"},
};
constexpr Step kRwsemHandoffSet[] = {
    {{5, 19},
     "first_waiter"sv,
     "6eebd5fb2083 locking/rwsem: Allow slowpath writer to ignore handoff bit if not set by first "
     "waiter"},
};
constexpr Step kWakePlacement[] = {
    {{4, 19},
     "available_idle_cpu"sv,
     "247f2f6f3c70 sched/core: Don't schedule threads on pre-empted vCPUs"},
};

constexpr EraSwitch kGuest[] = {
    {"wait_early", "when a queued PV waiter stops spinning and halts early", "never"sv, kWaitEarly},
    {"kick_at_unlock", "PV qspinlock: a halted successor is kicked by the unlock, not the hand-off",
     false, kKickAtUnlock},
    {"lock_stealing", "PV qspinlock: a slow-path entrant may take the lock past the queue", false,
     kLockStealing},
    {"hybrid_stealing", "PV qspinlock: steal while the queue head is not spinning", false, kHybrid},
    {"break_on_prev_preempted", "OSQ waiter leaves the queue when its predecessor is preempted",
     false, kOsqBreak},
    {"preempt_check_period", "mutex/rwsem owner spin consults vcpu_is_preempted(owner)",
     std::int64_t{0}, kOwnerSpinPreempt},
    {"mutex_handoff", "MUTEX_FLAG_HANDOFF: a woken first waiter that loses claims the lock", false,
     kMutexHandoff},
    {"mutex_trylock", "how the first mutex waiter raises HANDOFF: once by OR, or in its trylock",
     "or_owner"sv, kMutexTrylock},
    {"rwsem_handoff", "RWSEM_FLAG_HANDOFF: a starving waiter stops stealing", false, kRwsemHandoff},
    {"rwsem_reader_spin", "rwsem readers spin on the OSQ (RD/WR_NONSPINNABLE owner bits)", false,
     kRwsemReaderSpin},
    {"rwsem_handoff_set",
     "whose RWSEM_FLAG_HANDOFF is: the writer that set it, or the first waiter", "setter"sv,
     kRwsemHandoffSet},
    {"wake_placement", "where try_to_wake_up() places a woken task", "idle_cpu"sv, kWakePlacement},
};

// ---- host (virt/kvm, arch/x86/kvm, kernel/sched) ----

constexpr Step kPreemptedOnEveryPut[] = {
    {{5, 19},
     false,
     "54aa83c90198 KVM: x86: do not set st->preempted when going back to user space"},
};
constexpr Step kYieldBailout[] = {
    {{5, 13},
     true,
     "a1fa4cbd53d0 KVM: X86: Bail out of direct yield in case of under-committed scenarios"},
};
constexpr Step kInKernelCheck[] = {
    {{5, 3}, true, "046ddeed KVM: Check preempted_in_kernel for involuntary preemption"},
};
constexpr Step kIrqBoost[] = {
    {{5, 4}, true, "d73eb57b80b9 KVM: Boost vCPUs that are delivering interrupts"},
};
constexpr Step kIrqBoostUserMode[] = {
    {{5, 13},
     true,
     "52acd22faa1a KVM: Boost vCPU candidate in user mode which is delivering interrupt"},
};
constexpr Step kKickBoost[] = {
    {{5, 4},
     true,
     "266e85a5ec91 KVM: X86: Boost queue head vCPU to mitigate lock waiter preemption"},
};
constexpr Step kScheduler[] = {
    {{6, 6}, "eevdf"sv, "147f3efaa241 sched/fair: Implement an EEVDF-like scheduling policy"},
};

constexpr EraSwitch kHost[] = {
    {"scheduler", "the host's fair scheduler", "cfs"sv, kScheduler},
    {"kvm.preempted_on_every_put", "steal time's preempted byte written at every vcpu_put", true,
     kPreemptedOnEveryPut},
    {"kvm.yield_bailout_undercommit",
     "kvm_sched_yield() gives up when the yielder's pCPU runs nothing else", false, kYieldBailout},
    {"kvm.in_kernel_check_preempted_only",
     "a kernel-mode spinner skips only candidates preempted in user mode", false, kInKernelCheck},
    {"kvm.irq_boost", "vCPUs being woken or sent an interrupt are directed-yield candidates", false,
     kIrqBoost},
    {"kvm.irq_boost_user_mode",
     "a user-mode candidate with a pending interrupt is not skipped by a kernel-mode spinner",
     false, kIrqBoostUserMode},
    {"kvm.kick_boost", "KVM_HC_KICK_CPU yields to the kicked vCPU", false, kKickBoost},
};

int last_minor(int major) {
  switch (major) {
    case 4:
      return kLastMinor4;
    case 5:
      return kLastMinor5;
    default:
      return kNewest.minor;
  }
}

}  // namespace

std::span<const EraSwitch> switches(Side side) {
  return side == Side::guest ? std::span<const EraSwitch>(kGuest)
                             : std::span<const EraSwitch>(kHost);
}

std::optional<Version> find_profile(std::string_view name) {
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view s, int& out) {
    if (s.empty() || s.size() > 2 || (s.size() > 1 && s[0] == '0')) return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size();
  };
  Version v;
  if (!number(name.substr(0, dot), v.major) || !number(name.substr(dot + 1), v.minor))
    return std::nullopt;
  if (v < kOldest || v > kNewest || v.major < 4 || v.minor > last_minor(v.major))
    return std::nullopt;
  return v;
}

std::string profile_range() {
  return fmt::format("{} to {} (a release: 4.2-4.20, 5.0-5.19, 6.0-6.12, e.g. \"5.3\")",
                     to_string(kOldest), to_string(kNewest));
}

std::string to_string(Version v) { return fmt::format("{}.{}", v.major, v.minor); }

std::string to_string(const Value& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return fmt::format("\"{}\"", std::get<std::string_view>(v));
}

Value value_in(const EraSwitch& s, Version v) {
  Value out = s.oldest;
  for (const Step& step : s.steps)
    if (v >= step.since) out = step.value;
  return out;
}

}  // namespace pvlock::scenario::eras
