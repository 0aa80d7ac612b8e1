// SPDX-License-Identifier: GPL-2.0-only
// The kernel rw_semaphore: reader/writer semantics, writers' time-limited spinning on
// readers (NONSPINNABLE), writer hand-off after the wait timeout, reader stealing and its
// limit, and torture-style exclusion with readers at 1x-4x threads per core. Clock-driven
// paths use OsqHookEnv's fake clock, so no test depends on wall time.
#include "pvlock/lock/rwsem.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "lock/osq_test_env.hpp"
#include "native/torture.hpp"
#include "pvlock/env/native.hpp"

namespace pvlock {
namespace {

using testing::eventually;
using testing::on_cpu;
using testing::OsqHookEnv;
using testing::task_of;
using R = RwSem<OsqHookEnv>;

std::uint64_t counter(LockEvent e) { return NativeEnv::read_counters()[e]; }
bool sleeping(int cpu) { return !NativeEnv::task_on_cpu(task_of(cpu)); }

class RwSemTest : public testing::HookEnvTest {
 protected:
  static void advance_clock(std::int64_t ns) { OsqHookEnv::hooks().clock.fetch_add(ns); }
};

// A thread on a fixed CPU that takes the rwsem (shared or exclusive), records when, and
// holds it until released.
struct Holder {
  std::atomic<bool> acquired{false};
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  std::atomic<int> order{-1};
  std::atomic<bool> linger{false};  // stay on the CPU after unlocking until cleared
  std::thread t;
  void start(R& r, int cpu, bool shared, std::atomic<int>* seq = nullptr) {
    t = on_cpu(cpu, [this, &r, shared, seq] {
      started = true;
      shared ? r.lock_shared() : r.lock();
      if (seq != nullptr) order = seq->fetch_add(1);
      acquired = true;
      while (!release.load()) std::this_thread::yield();
      shared ? r.unlock_shared() : r.unlock();
      while (linger.load()) std::this_thread::yield();
    });
    // Bound to its CPU before returning, so that "not on a CPU" means "asleep".
    while (!started.load()) std::this_thread::yield();
  }
  void finish() {
    release = true;
    t.join();
  }
};

TEST_F(RwSemTest, ReadersShareWritersExclude) {
  RwSem<NativeEnv> r;
  r.lock_shared();
  std::thread([&] {
    EXPECT_TRUE(r.try_lock_shared());  // a second reader
    EXPECT_FALSE(r.try_lock());
    r.unlock_shared();
  }).join();
  EXPECT_NE(r.owner_word() & rwsem::kReaderOwned, 0u);
  r.unlock_shared();
  EXPECT_EQ(r.count_word(), 0u);

  r.lock();
  EXPECT_EQ(r.owner_word(), reinterpret_cast<std::uintptr_t>(NativeEnv::current()));
  std::thread([&] {
    EXPECT_FALSE(r.try_lock_shared());
    EXPECT_FALSE(r.try_lock());
  }).join();
  r.unlock();
  EXPECT_EQ(r.count_word(), 0u);
  EXPECT_EQ(r.owner_word(), 0u);
}

TEST(RwSemWord, ReaderSpinLimitIsTenPlusHalfTheReadersCappedAt25us) {
  EXPECT_EQ(rwsem::reader_spin_limit_ns(0), 10'000);
  EXPECT_EQ(rwsem::reader_spin_limit_ns(1), 10'500);
  EXPECT_EQ(rwsem::reader_spin_limit_ns(10), 15'000);
  EXPECT_EQ(rwsem::reader_spin_limit_ns(30), 25'000);
  EXPECT_EQ(rwsem::reader_spin_limit_ns(1000), 25'000);
}

TEST_F(RwSemTest, WriterSpinOnReadersTimesOutAndMarksNonspinnable) {
  OsqHookEnv::hooks().fake_clock = true;
  constexpr int kR = 251, kW1 = 252, kW2 = 253;
  R r;
  Holder reader, w1, w2;
  reader.start(r, kR, true);
  ASSERT_TRUE(eventually([&] { return reader.acquired.load(); }));

  // W1 spins on the reader-owned lock (it holds the OSQ while doing so). Its time limit
  // starts when it first reads the clock in that spin: wait for that read, or a slow W1 (under
  // ThreadSanitizer) could start its limit after the clock has been advanced below.
  w1.start(r, kW1, false);
  ASSERT_TRUE(eventually([&] { return r.osq_busy(); }));
  ASSERT_TRUE(eventually([&] { return OsqHookEnv::hooks().clock_reads.load() > 0; }));
  // One reader: the limit is 10.5 us of (fake) sched_clock. 10 us is not enough...
  advance_clock(10'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(r.osq_busy());
  EXPECT_EQ(r.owner_word() & rwsem::kNonspinnable, 0u);
  // ... 11 us is: W1 marks the owner NONSPINNABLE and goes to sleep.
  advance_clock(1'000);
  ASSERT_TRUE(eventually([&] { return sleeping(kW1); }));
  EXPECT_NE(r.owner_word() & rwsem::kNonspinnable, 0u);
  EXPECT_NE(r.count_word() & rwsem::kFlagWaiters, 0u);
  EXPECT_EQ(counter(LockEvent::rwsem_opt_nospin), 1u);
  EXPECT_EQ(counter(LockEvent::rwsem_opt_fail), 1u);

  // W2 sees NONSPINNABLE (rwsem_can_spin_on_owner fails) and sleeps at once.
  w2.start(r, kW2, false);
  ASSERT_TRUE(eventually([&] { return sleeping(kW2); }));
  EXPECT_EQ(counter(LockEvent::rwsem_opt_fail), 2u);
  EXPECT_EQ(counter(LockEvent::rwsem_opt_nospin), 1u);

  // The last reader out clears NONSPINNABLE and wakes the writers, in order.
  reader.finish();
  ASSERT_TRUE(eventually([&] { return w1.acquired.load(); }));
  EXPECT_EQ(r.owner_word() & rwsem::kNonspinnable, 0u);
  EXPECT_FALSE(w2.acquired.load());
  w1.finish();
  ASSERT_TRUE(eventually([&] { return w2.acquired.load(); }));
  w2.finish();
  EXPECT_EQ(r.count_word(), 0u);
  EXPECT_EQ(counter(LockEvent::rwsem_wlock), 2u);
}

// W1 holds the rwsem; W2 (which may not spin) queues and sleeps for `waited_ns` of fake
// clock; W1's release wakes W2, but W2 is held back after waking and the writer W3 takes
// the lock first. Returns once W3 owns it.
void waiting_writer_overtaken(R& r, std::atomic<int>& seq, Holder& w1, int k1, Holder& w2, int k2,
                              Holder& w3, int k3, std::int64_t waited_ns) {
  w1.start(r, k1, false, &seq);
  ASSERT_TRUE(eventually([&] { return w1.acquired.load(); }));
  OsqHookEnv::hooks().resched[k2] = true;
  w2.start(r, k2, false, &seq);
  ASSERT_TRUE(eventually([&] { return sleeping(k2); }));
  OsqHookEnv::hooks().clock.fetch_add(waited_ns);  // the fake clock (fake_clock = true)
  OsqHookEnv::hooks().hold_after_wake[k2] = true;
  w1.finish();
  w3.start(r, k3, false, &seq);
  ASSERT_TRUE(eventually([&] { return w3.acquired.load(); }));
}

TEST_F(RwSemTest, WriterWaitingBeyondTimeoutGetsHandoff) {
  OsqHookEnv::hooks().fake_clock = true;
  constexpr int kW1 = 261, kW2 = 262, kW3 = 263, kW4 = 264;
  std::atomic<int> seq{0};
  R r;
  Holder w1, w2, w3, w4;
  // W2 cannot spin (need_resched): it queues first and sleeps, and has waited 5 ms when W1
  // releases and wakes it; W3 (a spinner) steals the lock before W2 runs.
  waiting_writer_overtaken(r, seq, w1, kW1, w2, kW2, w3, kW3, rwsem::kWaitTimeoutNs + 1'000'000);
  EXPECT_EQ(counter(LockEvent::rwsem_opt_lock), 1u);

  // W2 retries, fails, and having waited > 4 ms sets HANDOFF before sleeping again.
  OsqHookEnv::hooks().hold_after_wake[kW2] = false;
  ASSERT_TRUE(
      eventually([&] { return (r.count_word() & rwsem::kFlagHandoff) != 0 && sleeping(kW2); }));
  EXPECT_EQ(counter(LockEvent::rwsem_wlock_handoff), 1u);

  // From now on nobody overtakes W2: W3's release leaves the lock free but reserved.
  OsqHookEnv::hooks().hold_after_wake[kW2] = true;
  w3.finish();
  EXPECT_FALSE(r.is_locked());
  EXPECT_FALSE(r.try_lock());
  EXPECT_FALSE(r.try_lock_shared());
  w4.start(r, kW4, false, &seq);  // a spinner: may spin, may not steal
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(w4.acquired.load());

  OsqHookEnv::hooks().hold_after_wake[kW2] = false;
  ASSERT_TRUE(eventually([&] { return w2.acquired.load(); }));
  EXPECT_EQ(r.count_word() & rwsem::kFlagHandoff, 0u);
  w2.finish();
  ASSERT_TRUE(eventually([&] { return w4.acquired.load(); }));
  w4.finish();
  EXPECT_EQ(w1.order.load(), 0);
  EXPECT_EQ(w3.order.load(), 1);
  EXPECT_EQ(w2.order.load(), 2);
  EXPECT_EQ(w4.order.load(), 3);
  EXPECT_EQ(r.count_word(), 0u);
}

TEST_F(RwSemTest, WithoutHandoffAStarvedWriterNeverReservesTheLock) {
  // Before 4f23dbc1e657 (v5.3) there was no RWSEM_FLAG_HANDOFF: a writer that has waited far
  // beyond 4 ms still only retries, and a spinner may steal the lock from it again.
  OsqHookEnv::policies().handoff.rwsem = false;
  OsqHookEnv::hooks().fake_clock = true;
  constexpr int kW1 = 271, kW2 = 272, kW3 = 273, kW4 = 274;
  std::atomic<int> seq{0};
  R r;
  Holder w1, w2, w3, w4;
  waiting_writer_overtaken(r, seq, w1, kW1, w2, kW2, w3, kW3, 100 * rwsem::kWaitTimeoutNs);

  // W2 retries, fails and sleeps again: no HANDOFF however long it waited.
  OsqHookEnv::hooks().hold_after_wake[kW2] = false;
  ASSERT_TRUE(
      eventually([&] { return counter(LockEvent::rwsem_sleep_writer) >= 1 && sleeping(kW2); }));
  EXPECT_EQ(r.count_word() & rwsem::kFlagHandoff, 0u);

  // W3's release leaves the lock free for anyone: W4 (a spinner) overtakes W2 again.
  OsqHookEnv::hooks().hold_after_wake[kW2] = true;
  w3.finish();
  w4.start(r, kW4, false, &seq);
  ASSERT_TRUE(eventually([&] { return w4.acquired.load(); }));
  w4.finish();
  OsqHookEnv::hooks().hold_after_wake[kW2] = false;
  ASSERT_TRUE(eventually([&] { return w2.acquired.load(); }));
  w2.finish();
  EXPECT_EQ(w3.order.load(), 1);
  EXPECT_EQ(w4.order.load(), 2);
  EXPECT_EQ(w2.order.load(), 3);
  EXPECT_EQ(counter(LockEvent::rwsem_wlock_handoff), 0u);
  EXPECT_EQ(r.count_word(), 0u);
}

// W0 holds the rwsem; W1 then W2 queue (neither may spin on the way in) and sleep past
// RWSEM_WAIT_TIMEOUT; W2, not first, is woken spuriously and may spin now. Its retry finds
// the lock held and sets HANDOFF. Returns once it has.
void non_first_writer_sets_handoff(R& r, std::atomic<int>& seq, Holder& w0, int k0, Holder& w1,
                                   int k1, Holder& w2, int k2) {
  w0.start(r, k0, false, &seq);
  ASSERT_TRUE(eventually([&] { return w0.acquired.load(); }));
  OsqHookEnv::hooks().resched[k1] = true;
  w1.start(r, k1, false, &seq);
  ASSERT_TRUE(eventually([&] { return sleeping(k1); }));
  OsqHookEnv::hooks().resched[k2] = true;
  w2.start(r, k2, false, &seq);
  ASSERT_TRUE(eventually([&] { return sleeping(k2); }));
  OsqHookEnv::hooks().clock.fetch_add(rwsem::kWaitTimeoutNs + 1'000'000);
  OsqHookEnv::hooks().resched[k2] = false;
  OsqHookEnv::wake(task_of(k2));  // spurious: nothing changed for W2
  ASSERT_TRUE(eventually([&] { return (r.count_word() & rwsem::kFlagHandoff) != 0; }));
  EXPECT_EQ(counter(LockEvent::rwsem_wlock_handoff), 1u);
}

// Either era ends the same way: W0 releases, W1 (first in the queue) takes the lock, then
// W2; the count word is empty afterwards.
void release_in_queue_order(R& r, Holder& w0, Holder& w1, Holder& w2) {
  w0.finish();
  ASSERT_TRUE(eventually([&] { return w1.acquired.load(); }));
  w1.finish();
  ASSERT_TRUE(eventually([&] { return w2.acquired.load(); }));
  w2.finish();
  EXPECT_EQ(w1.order.load(), 1);
  EXPECT_EQ(w2.order.load(), 2);
  EXPECT_EQ(r.count_word(), 0u);
}

TEST_F(RwSemTest, BeforeV519TheWriterThatSetsHandoffOwnsIt) {
  // Before 6eebd5fb2083 the setter marks itself (handoff_set) and, so marked, spins on the
  // running owner instead of sleeping, although it is not next.
  OsqHookEnv::policies().handoff.rwsem_handoff_set = RwsemHandoffSet::setter;
  OsqHookEnv::hooks().fake_clock = true;
  constexpr int kW0 = 281, kW1 = 282, kW2 = 283;
  std::atomic<int> seq{0};
  R r;
  Holder w0, w1, w2;
  non_first_writer_sets_handoff(r, seq, w0, kW0, w1, kW1, w2, kW2);
  const std::uint64_t calls = OsqHookEnv::hooks().preempted_calls.load();
  ASSERT_TRUE(
      eventually([&] { return OsqHookEnv::hooks().preempted_calls.load() > calls + 10'000; }));
  EXPECT_FALSE(sleeping(kW2));

  release_in_queue_order(r, w0, w1, w2);
}

TEST_F(RwSemTest, SinceV519HandoffBelongsToTheFirstWaiter) {
  // 6eebd5fb2083 (as in 6.1.y): the setter marks the first waiter, so W2 is not the
  // designated owner and sleeps again; W1 is.
  OsqHookEnv::policies().handoff.rwsem_handoff_set = RwsemHandoffSet::first_waiter;
  OsqHookEnv::hooks().fake_clock = true;
  constexpr int kW0 = 284, kW1 = 285, kW2 = 286;
  std::atomic<int> seq{0};
  R r;
  Holder w0, w1, w2;
  non_first_writer_sets_handoff(r, seq, w0, kW0, w1, kW1, w2, kW2);
  ASSERT_TRUE(
      eventually([&] { return counter(LockEvent::rwsem_sleep_writer) >= 1 && sleeping(kW2); }));

  release_in_queue_order(r, w0, w1, w2);
}

TEST_F(RwSemTest, ReadersDoNotStealFromAQueuedWriterWhileReaderOwned) {
  constexpr int kR1 = 271, kW = 272, kR2 = 273;
  std::atomic<int> seq{0};
  R r;
  Holder r1, w, r2;
  r1.start(r, kR1, true, &seq);
  ASSERT_TRUE(eventually([&] { return r1.acquired.load(); }));
  OsqHookEnv::hooks().resched[kW] = true;  // no spinning: W queues behind the reader
  w.start(r, kW, false, &seq);
  ASSERT_TRUE(eventually([&] { return sleeping(kW); }));

  // R2 could share with R1, but a writer is waiting: it queues instead of stealing.
  r2.start(r, kR2, true, &seq);
  ASSERT_TRUE(eventually([&] { return sleeping(kR2); }));
  EXPECT_EQ(counter(LockEvent::rwsem_rlock_steal), 0u);

  r1.finish();
  ASSERT_TRUE(eventually([&] { return w.acquired.load(); }));
  w.finish();
  ASSERT_TRUE(eventually([&] { return r2.acquired.load(); }));
  r2.finish();
  EXPECT_EQ(w.order.load(), 1);
  EXPECT_EQ(r2.order.load(), 2);
  EXPECT_EQ(counter(LockEvent::rwsem_wake_reader), 1u);
  EXPECT_EQ(counter(LockEvent::rwsem_rlock), 1u);
  EXPECT_EQ(r.count_word(), 0u);
}

TEST_F(RwSemTest, ReaderStealsAFreeLockFromAWokenWriter) {
  constexpr int kW1 = 281, kW2 = 282, kR = 283;
  R r;
  Holder w1, w2, rd;
  w1.start(r, kW1, false);
  ASSERT_TRUE(eventually([&] { return w1.acquired.load(); }));
  OsqHookEnv::hooks().resched[kW2] = true;
  w2.start(r, kW2, false);
  ASSERT_TRUE(eventually([&] { return sleeping(kW2); }));

  OsqHookEnv::hooks().hold_after_wake[kW2] = true;
  w1.finish();  // free, WAITERS set, W2 woken but not yet running
  rd.start(r, kR, true);
  ASSERT_TRUE(eventually([&] { return rd.acquired.load(); }));
  EXPECT_EQ(counter(LockEvent::rwsem_rlock_steal), 1u);

  OsqHookEnv::hooks().hold_after_wake[kW2] = false;
  // W2 lost the race and sleeps again; the reader, last out, wakes it.
  ASSERT_TRUE(eventually([&] { return sleeping(kW2); }));
  rd.finish();
  ASSERT_TRUE(eventually([&] { return w2.acquired.load(); }));
  w2.finish();
  EXPECT_EQ(r.count_word(), 0u);
}

// ---- v5.3-v5.10: readers spin (rwsem_reader_spin) -----------------------------------

TEST_F(RwSemTest, V53ReaderSpinsOnARunningWriterAndTakesTheLockUnqueued) {
  OsqHookEnv::policies().rwsem.reader_spin = true;
  constexpr int kW = 291, kR = 292;
  R r;
  Holder w, rd;
  w.start(r, kW, false);
  ASSERT_TRUE(eventually([&] { return w.acquired.load(); }));
  // The writer runs: the reader queues on the OSQ and spins on it instead of sleeping.
  rd.start(r, kR, true);
  ASSERT_TRUE(eventually([&] { return r.osq_busy(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(r.osq_busy());
  EXPECT_FALSE(sleeping(kR));
  EXPECT_FALSE(rd.acquired.load());
  EXPECT_EQ(r.count_word() & rwsem::kFlagWaiters, 0u);  // never queued
  // The writer stays on its CPU after up_write(): a thread that exits at once looks to the
  // spinner like an owner that stopped running, which ends the spin (as it should).
  w.linger = true;
  w.release = true;
  ASSERT_TRUE(eventually([&] { return rd.acquired.load(); }));
  w.linger = false;
  w.t.join();
  EXPECT_EQ(counter(LockEvent::rwsem_opt_rlock), 1u);
  EXPECT_EQ(counter(LockEvent::rwsem_sleep_reader), 0u);
  EXPECT_EQ(counter(LockEvent::rwsem_rlock_steal), 0u);
  EXPECT_NE(r.owner_word() & rwsem::kReaderOwned, 0u);
  rd.finish();
  EXPECT_EQ(r.count_word(), 0u);
}

TEST_F(RwSemTest, WithoutReaderSpinningAReaderSleepsBehindARunningWriter) {
  // The v5.11+ rwsem: no reader spinning, so the same reader queues and sleeps.
  constexpr int kW = 293, kR = 294;
  R r;
  Holder w, rd;
  w.start(r, kW, false);
  ASSERT_TRUE(eventually([&] { return w.acquired.load(); }));
  rd.start(r, kR, true);
  ASSERT_TRUE(eventually([&] { return sleeping(kR); }));
  EXPECT_FALSE(r.osq_busy());
  w.finish();
  ASSERT_TRUE(eventually([&] { return rd.acquired.load(); }));
  EXPECT_EQ(counter(LockEvent::rwsem_opt_rlock), 0u);
  EXPECT_EQ(counter(LockEvent::rwsem_wake_reader), 1u);
  rd.finish();
  EXPECT_EQ(r.count_word(), 0u);
}

TEST_F(RwSemTest, V53WriterTimedOutOnReadersTurnsReaderSpinningOff) {
  // A writer that times out on readers sets RD_ and WR_NONSPINNABLE; once it holds the lock
  // it sets RD_NONSPINNABLE again, so a reader arriving then sleeps instead of spinning.
  OsqHookEnv::policies().rwsem.reader_spin = true;
  OsqHookEnv::hooks().fake_clock = true;
  constexpr int kR1 = 295, kW = 296, kR2 = 297;
  R r;
  Holder r1, w, r2;
  r1.start(r, kR1, true);
  ASSERT_TRUE(eventually([&] { return r1.acquired.load(); }));
  w.start(r, kW, false);
  ASSERT_TRUE(eventually([&] { return r.osq_busy(); }));
  ASSERT_TRUE(eventually([&] { return OsqHookEnv::hooks().clock_reads.load() > 0; }));
  advance_clock(11'000);  // past the 10.5 us limit for one reader
  ASSERT_TRUE(eventually([&] { return sleeping(kW); }));
  const std::uintptr_t both = rwsem::kRdNonspinnable | rwsem::kWrNonspinnable;
  EXPECT_EQ(r.owner_word() & both, both);
  EXPECT_EQ(counter(LockEvent::rwsem_opt_nospin), 1u);

  // The last reader out clears only the writers' bit and wakes the writer, which turns
  // reader spinning off as it takes the lock.
  r1.finish();
  ASSERT_TRUE(eventually([&] { return w.acquired.load(); }));
  EXPECT_EQ(r.owner_word() & both, rwsem::kRdNonspinnable);
  EXPECT_EQ(counter(LockEvent::rwsem_opt_norspin), 1u);

  // A reader that finds RD_NONSPINNABLE does not spin on the running writer: it sleeps.
  r2.start(r, kR2, true);
  ASSERT_TRUE(eventually([&] { return sleeping(kR2); }));
  EXPECT_FALSE(r.osq_busy());
  w.finish();
  ASSERT_TRUE(eventually([&] { return r2.acquired.load(); }));
  // Granted by the writer's wake-up, it hands on the RD_NONSPINNABLE it saw at entry.
  EXPECT_NE(r.owner_word() & rwsem::kRdNonspinnable, 0u);
  EXPECT_EQ(counter(LockEvent::rwsem_opt_rlock), 0u);
  r2.finish();
  EXPECT_EQ(r.count_word(), 0u);
}

// ---- torture: real threads, NativeEnv -------------------------------------------------

int cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

class RwSemTorture : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(RwSemTorture, ExcludesAndServesEveryWriter) {
  const auto [per_core, readers] = GetParam();
  native::TortureOptions o;
  o.lock = "rwsem";
  o.threads = per_core * cores();
  o.readers = readers;
  o.duration_s = 0.3;
  o.hold_ns = 200;
  const native::TortureResult r = native::run_torture(o);
  EXPECT_EQ(r.violations, 0u);
  EXPECT_FALSE(r.stuck);
  EXPECT_GT(r.min_per_thread, 0u);  // no writer starved (FIFO wake-ups, HANDOFF)
  if (readers > 0) {
    EXPECT_GT(r.read_acquisitions, 0u);
  }
  for (const auto& s : r.per_thread) EXPECT_GT(s.acquisitions, 0u);  // readers too
}

TEST(RwSemTortureV53, ReadersThatSpinExcludeAndServeEveryone) {
  // The v5.3-v5.10 reader slow path (rwsem_reader_spin) on real threads: readers spin on the
  // OSQ instead of stealing, and exclusion and liveness still hold.
  native::TortureOptions o;
  o.lock = "rwsem";
  o.threads = 2 * cores();
  o.readers = 4;
  o.duration_s = 0.3;
  o.hold_ns = 200;
  o.policies.rwsem.reader_spin = true;
  const native::TortureResult r = native::run_torture(o);
  EXPECT_EQ(r.violations, 0u);
  EXPECT_FALSE(r.stuck);
  EXPECT_GT(r.min_per_thread, 0u);
  EXPECT_GT(r.read_acquisitions, 0u);
  for (const auto& s : r.per_thread) EXPECT_GT(s.acquisitions, 0u);
  // Readers reached the slow path, and in this era it never steals.
  const auto& c = r.counters;
  EXPECT_GT(
      c[LockEvent::rwsem_opt_rlock] + c[LockEvent::rwsem_opt_rlock2] + c[LockEvent::rwsem_rlock],
      0u);
  EXPECT_EQ(c[LockEvent::rwsem_rlock_steal], 0u);
}

INSTANTIATE_TEST_SUITE_P(ThreadsPerCore, RwSemTorture,
                         ::testing::Combine(::testing::Values(1, 2, 4), ::testing::Values(0, 4)),
                         [](const auto& info) {
                           return "x" + std::to_string(std::get<0>(info.param)) + "_readers" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace pvlock
