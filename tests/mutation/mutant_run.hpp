// SPDX-License-Identifier: GPL-2.0-only
// One simulated torture run of a PV qspinlock compiled with one protocol step removed
// (include/pvlock/lock/mutation.hpp): what catches it, if anything.
//
// The machine: one VM of 8 vCPUs on a 4-pCPU KVM host (2x over-commit, so vCPUs are
// preempted and waiters halt), SPIN_THRESHOLD lowered to 256 so that every waiter halts
// often, writers taking the lock as spin_lock_irq (IRQs off, as locktorture's
// spin_lock_irq type: with IRQs on the guest tick would wake a waiter whose kick never came,
// turning a lost wake-up into a 4 ms stall instead of a hang). Each writer checks the
// owner slot and a counter updated across the hold (mutual exclusion); the liveness
// watchdog stops a run in which a writer completes nothing for 100 ms (several host time
// slices: a vCPU of a 2x over-committed host legitimately waits ~12 ms for its pCPU).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pvlock/lock/mutation.hpp"
#include "pvlock/lock/qspinlock.hpp"
#include "sim/guest/guest.hpp"
#include "sim/guest/sim_env.hpp"
#include "sim/host/kvm_platform.hpp"
#include "sim/simulation.hpp"
#include "workload/guest_api.hpp"
#include "workload/lock_watch.hpp"

namespace pvlock::mutation_test {

// The simulated environment under another name, so that each mutant is its own template
// instantiation (the library's SimEnv instances stay unmutated).
template <Mutation M>
struct MutEnv : sim::SimEnv {};

}  // namespace pvlock::mutation_test

namespace pvlock {
template <Mutation M>
inline constexpr Mutation mutation<mutation_test::MutEnv<M>> = M;
}  // namespace pvlock

namespace pvlock::mutation_test {

struct Outcome {
  std::uint64_t acquisitions = 0;
  std::uint64_t violations = 0;
  bool watchdog = false;
  std::string stuck_state;  // the first stuck task's state, if the watchdog fired
  std::string diagnostic;   // the watchdog's whole report
  bool caught() const { return violations > 0 || watchdog; }
};

inline constexpr double kDurationMs = 250;
inline constexpr double kWatchdogMs = 100;

template <Mutation M>
class MutantTorture {
 public:
  explicit MutantTorture(sim::Guest& g) : g_(g) {
    for (int i = 0; i < g.vcpu_count(); ++i)
      g.create_task("writer/" + std::to_string(i), i, [this, i] { loop(i); });
  }
  std::uint64_t acquisitions() const { return acquisitions_; }
  std::uint64_t violations() const {
    const std::uint64_t c = arena_->counter.raw();
    return violations_ + (c > acquisitions_ ? c - acquisitions_ : acquisitions_ - c);
  }

 private:
  void loop(int id) {
    namespace api = workload::api;
    const auto me = static_cast<std::uint32_t>(id + 1);
    for (;;) {
      api::irq_disable();
      api::lock_waiting(watch_);
      arena_->lock.lock();
      api::lock_acquired(watch_);
      if (arena_->owner.exchange(me) != 0) ++violations_;
      const std::uint64_t c = arena_->counter.load();
      api::compute(500 + static_cast<std::int64_t>(api::self().rng.below(1000)));
      arena_->counter.store(c + 1);
      ++acquisitions_;
      if (arena_->owner.exchange(0) != me) ++violations_;
      api::lock_releasing(watch_);
      arena_->lock.unlock();
      api::irq_enable();
      api::progress();
      api::compute(static_cast<std::int64_t>(api::self().rng.below(2000)));
    }
  }

  struct alignas(64) Arena {
    alignas(64) Qspinlock<MutEnv<M>, true> lock;
    alignas(64) sim::SimAtomic<std::uint32_t> owner{};
    alignas(64) sim::SimAtomic<std::uint64_t> counter{};
  };
  sim::Guest& g_;
  std::unique_ptr<Arena> arena_ = std::make_unique<Arena>();
  sim::LockWatch watch_ = workload::make_lock_watch(arena_->lock, "pvqspinlock (mutant)");
  std::uint64_t acquisitions_ = 0;
  std::uint64_t violations_ = 0;
};

// The machine and the guest's qspinlock knobs of one torture setup.
struct TortureSetup {
  bool hybrid_stealing = true;  // 11752adb's unfair trylock (the kernel's default)
  std::uint32_t spin_threshold = 256;
  int vcpus = 8;
  int pcpus = 4;
  // [faults] preempt_at_access: the host deschedules a vCPU between two of its task's memory
  // accesses with this probability (the adversarial schedule that opens few-instruction
  // windows, see docs/mutations.md).
  double preempt_at_access = 0;
  std::int64_t preempt_at_access_ns = 20'000;  // how long the host keeps the pCPU
};

inline scenario::Scenario mutant_scenario(std::uint64_t seed, const TortureSetup& su) {
  scenario::Scenario sc;
  sc.name = "mutant";
  sc.run.seed = seed;
  sc.run.warmup_ms = 0;
  sc.run.duration_ms = kDurationMs;
  sc.run.watchdog_ms = kWatchdogMs;
  sc.machine.sockets = 1;
  sc.machine.cores_per_socket = su.pcpus;
  sc.host = scenario::HostSpec{};
  sc.faults.preempt_at_access = su.preempt_at_access;
  sc.faults.preempt_at_access_ns = su.preempt_at_access_ns;
  scenario::VmSpec vm;
  vm.name = "vm";
  vm.vcpus = su.vcpus;
  vm.guest.lock_name = "pvqspinlock";
  vm.guest.policies.qspinlock.spin_threshold = su.spin_threshold;
  vm.guest.policies.qspinlock.hybrid_stealing = su.hybrid_stealing;
  sc.vms.push_back(vm);
  return sc;
}

template <Mutation M>
Outcome run_mutant(std::uint64_t seed, const TortureSetup& su) {
  const scenario::Scenario sc = mutant_scenario(seed, su);
  // Declared before the simulation so that it outlives the fibers running its program.
  std::unique_ptr<MutantTorture<M>> w;
  sim::Simulation s(sc, std::make_unique<sim::KvmPlatform>(sc));
  sim::Guest& g = s.add_guest("vm", sc.vms.front().guest, su.vcpus);
  g.lock_name = "pvqspinlock";
  w = std::make_unique<MutantTorture<M>>(g);
  s.run();
  Outcome o;
  o.acquisitions = w->acquisitions();
  o.violations = w->violations();
  if (const auto& rep = s.watchdog().report()) {
    o.watchdog = true;
    if (!rep->tasks.empty()) o.stuck_state = rep->tasks.front().state;
    o.diagnostic = rep->text();
  }
  return o;
}

inline Outcome run_mutant(Mutation m, std::uint64_t seed, const TortureSetup& st) {
  switch (m) {
    case Mutation::none:
      return run_mutant<Mutation::none>(seed, st);
    case Mutation::no_kick_at_unlock:
      return run_mutant<Mutation::no_kick_at_unlock>(seed, st);
    case Mutation::no_hash_before_halt:
      return run_mutant<Mutation::no_hash_before_halt>(seed, st);
    case Mutation::halted_store_after_check:
      return run_mutant<Mutation::halted_store_after_check>(seed, st);
    case Mutation::no_pending_while_head_spins:
      return run_mutant<Mutation::no_pending_while_head_spins>(seed, st);
  }
  return {};
}

}  // namespace pvlock::mutation_test
