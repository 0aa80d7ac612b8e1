// SPDX-License-Identifier: GPL-2.0-only
// A native environment whose scheduler and hypervisor signals are set by the test: it hides
// NativeEnv's need_resched(), vcpu_is_preempted(), now_ns() and block() so that the race paths
// of the OSQ, mutex and rwsem (unqueue, hand-off, reader-owned timeout) happen exactly when a
// test wants them. Shared by the osq/mutex/rwsem tests.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <thread>
#include <utility>

#include "pvlock/env/native.hpp"

namespace pvlock::testing {

struct OsqHookEnv : NativeEnv {
  static constexpr int kCpus = native::kMaxCpus;
  struct Hooks {
    std::array<std::atomic<bool>, kCpus> resched{};          // need_resched() per CPU
    std::array<std::atomic<bool>, kCpus> preempted{};        // vcpu_is_preempted() per CPU
    std::array<std::atomic<bool>, kCpus> hold_after_wake{};  // park after block() returns
    std::array<std::atomic<bool>, kCpus> hold_in_prepare{};  // park in prepare_block()
    std::array<std::atomic<bool>, kCpus> parked{};           // ... and is parked there now
    std::atomic<bool> fake_clock{false};
    std::atomic<std::int64_t> clock{1'000'000};
    std::atomic<std::uint64_t> clock_reads{0};  // now_ns() calls while the clock is fake
    std::atomic<std::uint64_t> preempted_calls{0};
  };
  static Hooks& hooks() {
    static Hooks h;
    return h;
  }
  static void reset_hooks() {
    Hooks& h = hooks();
    for (int i = 0; i < kCpus; ++i) {
      h.resched[i] = false;
      h.preempted[i] = false;
      h.hold_after_wake[i] = false;
      h.hold_in_prepare[i] = false;
      h.parked[i] = false;
    }
    h.fake_clock = false;
    h.clock = 1'000'000;
    h.clock_reads = 0;
    h.preempted_calls = 0;
  }

  static bool need_resched() { return hooks().resched[cpu()].load(); }
  static bool vcpu_is_preempted(int c) {
    hooks().preempted_calls.fetch_add(1, std::memory_order_relaxed);
    return hooks().preempted[c].load();
  }
  static std::int64_t now_ns() {
    if (!hooks().fake_clock.load()) return NativeEnv::now_ns();
    hooks().clock_reads.fetch_add(1);
    return hooks().clock.load();
  }
  // schedule(): a woken task can be held back, to let another task run into the window
  // between a wake-up and the woken task's retry.
  static void block() {
    NativeEnv::block();
    while (hooks().hold_after_wake[cpu()].load()) std::this_thread::yield();
  }
  // set_current_state(): a task can be held here, between what its lock does just before
  // (the mutex's v4.10-5.14 HANDOFF request) and its next trylock.
  static void prepare_block() {
    NativeEnv::prepare_block();
    const int c = cpu();
    if (!hooks().hold_in_prepare[c].load()) return;
    hooks().parked[c] = true;
    while (hooks().hold_in_prepare[c].load()) std::this_thread::yield();
    hooks().parked[c] = false;
  }
};
static_assert(Environment<OsqHookEnv>);

// Polls `cond` (yielding) until it holds; false after a generous safety limit, so a broken
// lock fails the test instead of hanging it. Never used to assert a duration.
inline bool eventually(const std::function<bool()>& cond) {
  for (int i = 0; i < 200'000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return cond();
}

// A thread that runs on a fixed CPU id (ids from 200 up keep clear of the torture tests).
inline std::thread on_cpu(int cpu, std::function<void()> body) {
  return std::thread([cpu, body = std::move(body)] {
    if (!NativeEnv::bind_cpu(cpu)) std::abort();
    body();
  });
}

inline native::Task* task_of(int cpu) { return &NativeEnv::per_cpu<native::Task>(cpu); }

// Base of the OSQ, mutex and rwsem tests: every test starts with fresh hooks and counters
// and leaves the lock policies as it found them.
class HookEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OsqHookEnv::reset_hooks();
    saved_ = OsqHookEnv::policies();
    NativeEnv::reset_counters();
  }
  void TearDown() override {
    OsqHookEnv::policies() = saved_;
    OsqHookEnv::reset_hooks();
  }
  LockPolicies saved_{};
};

}  // namespace pvlock::testing
