// SPDX-License-Identifier: GPL-2.0-only
// The watchdog on a sleeping lock with several tasks per vCPU, both ways: a mutex whose first
// waiter, once woken, waits on its vCPU's run queue behind a task that keeps taking the lock
// is unfair but not stuck; the same mutex whose environment loses every wake-up of one
// sleeping waiter is stuck, and that waiter is named, asleep.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "pvlock/lock/mutex.hpp"
#include "sim/context.hpp"
#include "sim/guest/guest.hpp"
#include "sim/guest/sim_env.hpp"
#include "sim/host/kvm_platform.hpp"
#include "sim/simulation.hpp"
#include "workload/guest_api.hpp"
#include "workload/lock_watch.hpp"

namespace pvlock::sim {
namespace {

// SimEnv, except that from lose_after_ns on, the first watched waiter (one that has reported
// progress) found asleep at a wake-up, and every later wake-up of it, are lost: the lost
// wake-up a broken lock or scheduler would make.
struct LosingEnv : SimEnv {
  static inline std::int64_t lose_after_ns = -1;  // < 0: lose nothing
  static inline Task* victim = nullptr;
  static void wake(task* t) {
    if (lose_after_ns >= 0 && victim == nullptr && t->blocked && t->progress_tracked &&
        now_ns() >= lose_after_ns)
      victim = t;
    if (t == victim) return;
    SimEnv::wake(t);
  }
};

constexpr int kVcpus = 8;
constexpr int kTasksPerVcpu = 4;

// Lockloop's body on Mutex<LosingEnv>: ~2 us outside, 1 us inside.
class Loop {
 public:
  explicit Loop(Guest& g) {
    for (int i = 0; i < kVcpus * kTasksPerVcpu; ++i)
      g.create_task("loop/" + std::to_string(i), i % kVcpus, [this] { body(); });
  }
  std::uint64_t ops() const { return ops_; }

 private:
  void body() {
    namespace api = workload::api;
    for (;;) {
      api::compute(1000 + static_cast<std::int64_t>(api::self().rng.below(2000)));
      api::lock_waiting(watch_);
      lock_->lock();
      api::lock_acquired(watch_);
      api::compute(1000);
      api::lock_releasing(watch_);
      lock_->unlock();
      api::progress();
      ++ops_;
    }
  }
  struct alignas(64) Holder {
    Mutex<LosingEnv> m;
    void lock() { m.lock(); }
    void unlock() { m.unlock(); }
  };
  std::unique_ptr<Holder> lock_ = std::make_unique<Holder>();
  LockWatch watch_ = workload::make_lock_watch(lock_->m, "mutex (test)");
  std::uint64_t ops_ = 0;
};

struct Outcome {
  std::uint64_t ops = 0;
  std::string report;  // empty: the watchdog did not fire
  std::string victim;
};

// 8 vCPUs on 4 pCPUs, 200 ms with a watchdog limit of 50 ms: long enough for a wake-up
// lost late (the victim may first have starved, legitimately, behind woken waiters queued on
// busy vCPUs) to be caught.
Outcome run(std::uint64_t seed, std::int64_t lose_after_ns) {
  LosingEnv::lose_after_ns = lose_after_ns;
  LosingEnv::victim = nullptr;
  scenario::Scenario sc;
  sc.name = "sleeping-lock";
  sc.run.seed = seed;
  sc.run.warmup_ms = 0;
  sc.run.duration_ms = 200;
  sc.run.watchdog_ms = 50;
  sc.machine.sockets = 1;
  sc.machine.cores_per_socket = 4;
  sc.host = scenario::HostSpec{};
  scenario::VmSpec vm;
  vm.name = "vm";
  vm.vcpus = kVcpus;
  vm.guest.lock_name = "mutex";
  sc.vms.push_back(vm);
  std::unique_ptr<Loop> w;  // outlives the fibers running its program
  Simulation s(sc, std::make_unique<KvmPlatform>(sc));
  Guest& g = s.add_guest("vm", sc.vms.front().guest, kVcpus);
  g.lock_name = "mutex";
  {
    GuestSetUp setup(g);  // the mutex's wait_lock is the guest's kernel's spinlock
    w = std::make_unique<Loop>(g);
  }
  s.run();
  Outcome o;
  o.ops = w->ops();
  if (const auto& rep = s.watchdog().report()) o.report = rep->text();
  if (LosingEnv::victim != nullptr) o.victim = "vm: " + LosingEnv::victim->name + " ";
  LosingEnv::lose_after_ns = -1;
  return o;
}

TEST(WatchdogSleepingLock, WokenWaiterQueuedOnItsVcpuIsNotStuck) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const Outcome o = run(seed, -1);
    EXPECT_TRUE(o.report.empty()) << "seed " << seed << ":\n" << o.report;
    EXPECT_GT(o.ops, 0u);
  }
}

TEST(WatchdogSleepingLock, LostWakeupIsStillReported) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const Outcome o = run(seed, 5'000'000);
    ASSERT_FALSE(o.victim.empty()) << "seed " << seed << ": no wake-up was lost";
    ASSERT_FALSE(o.report.empty())
        << "seed " << seed << ": the lost wake-up of " << o.victim << "went unnoticed";
    // The victim is named, asleep in schedule().
    const auto at = o.report.find(o.victim);
    ASSERT_NE(at, std::string::npos) << o.victim << "\n" << o.report;
    EXPECT_NE(o.report.find("blocked (asleep in schedule()", at), std::string::npos) << o.report;
  }
}

}  // namespace
}  // namespace pvlock::sim
