// SPDX-License-Identifier: GPL-2.0-only
// The PV lock -> node hash table: sizing, cache-line-aligned probing, collisions,
// wrap-around at the end of the table, a nearly full table, and the full-table BUG().
#include "pvlock/lock/pv_hash.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "pvlock/env/native.hpp"

namespace pvlock {
namespace {

using Hash = PvLockHash<NativeEnv>;

// Fake lock addresses (never dereferenced), 4-byte aligned like a qspinlock.
std::uintptr_t fake_lock(std::uintptr_t i) { return 0x7f0000000000u + 4 * i; }

// The first `n` fake locks whose home is `line_start`.
std::vector<std::uintptr_t> colliding(const Hash& h, std::size_t line_start, std::size_t n) {
  std::vector<std::uintptr_t> out;
  for (std::uintptr_t i = 1; out.size() < n; ++i)
    if (h.home(fake_lock(i)) == line_start) out.push_back(fake_lock(i));
  return out;
}

TEST(PvHash, SizedFromPossibleCpus) {
  EXPECT_EQ(Hash::bits_for(1), 8u);   // never below one page of 16-byte entries
  EXPECT_EQ(Hash::bits_for(64), 8u);  // 256 entries = 4 x 64
  // alloc_large_system_hash(n, high_limit = n) keeps ilog2(n) bits: rounded down.
  EXPECT_EQ(Hash::bits_for(65), 8u);  // 260 -> 256
  EXPECT_EQ(Hash::bits_for(80), 8u);  // 320 -> 256
  EXPECT_EQ(Hash(Hash::bits_for(80)).size(), 256u);
  EXPECT_EQ(Hash::bits_for(128), 9u);  // 512 exactly
  EXPECT_EQ(Hash::bits_for(240), 9u);  // 960 -> 512
  EXPECT_EQ(Hash::bits_for(1024), 12u);
  EXPECT_EQ(sizeof(Hash::Entry), 16u);
  EXPECT_EQ(Hash::kEntriesPerLine, 4u);
  Hash lazily;  // default: from Env::possible_cpus()
  EXPECT_EQ(lazily.bits(), Hash::bits_for(NativeEnv::possible_cpus()));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&lazily.entry(0)) % Hash::kCacheLine, 0u);
}

TEST(PvHash, ProbingStartsAtACacheLine) {
  Hash h(8);
  std::set<std::size_t> homes;
  for (std::uintptr_t i = 1; i < 2000; ++i) {
    const std::size_t home = h.home(fake_lock(i));
    EXPECT_EQ(home % Hash::kEntriesPerLine, 0u);
    EXPECT_LT(home, h.size());
    homes.insert(home);
  }
  EXPECT_GT(homes.size(), 50u);  // the hash spreads locks over the lines
}

TEST(PvHash, CollisionsProbeLinearlyAndUnhashFindsEach) {
  Hash h(6);  // 64 entries, 16 lines
  const auto keys = colliding(h, 8, 6);
  NativeEnv::reset_counters();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto* lp = h.hash(keys[i], 100 + i);
    EXPECT_EQ(lp, &h.entry(8 + i).lock) << "linear probe from the home line";
  }
  // qstat_hop: probes per insertion summed: 1 + 2 + ... + 6.
  EXPECT_EQ(NativeEnv::read_counters()[LockEvent::pv_hash_hops], 21u);
  // Unhash out of order; a freed slot in the middle does not hide later entries.
  EXPECT_EQ(h.unhash(keys[2]), 102u);
  EXPECT_EQ(h.unhash(keys[5]), 105u);
  EXPECT_EQ(h.unhash(keys[0]), 100u);
  // The freed home slot is reused first.
  EXPECT_EQ(h.hash(keys[0], 200), &h.entry(8).lock);
  EXPECT_EQ(h.unhash(keys[4]), 104u);
  EXPECT_EQ(h.unhash(keys[3]), 103u);
  EXPECT_EQ(h.unhash(keys[1]), 101u);
  EXPECT_EQ(h.unhash(keys[0]), 200u);
  EXPECT_EQ(h.used(), 0u);
}

TEST(PvHash, WrapsAroundTheEndOfTheTable) {
  Hash h(5);  // 32 entries
  const std::size_t last_line = h.size() - Hash::kEntriesPerLine;
  const auto keys = colliding(h, last_line, 6);
  for (std::size_t i = 0; i < keys.size(); ++i) h.hash(keys[i], 1 + i);
  EXPECT_EQ(h.entry(h.size() - 1).lock.load(), keys[3]);
  EXPECT_EQ(h.entry(0).lock.load(), keys[4]);
  EXPECT_EQ(h.entry(1).lock.load(), keys[5]);
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(h.unhash(keys[i]), 1 + i);
  EXPECT_EQ(h.used(), 0u);
}

TEST(PvHash, NearlyFullTableStillFindsTheLastSlot) {
  Hash h(4);  // 16 entries
  std::vector<std::uintptr_t> keys;
  for (std::uintptr_t i = 1; keys.size() < h.size(); ++i) keys.push_back(fake_lock(i));
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) h.hash(keys[i], i + 1);
  EXPECT_EQ(h.used(), h.size() - 1);
  h.hash(keys.back(), 999);  // wherever its home, it probes around to the one free slot
  EXPECT_EQ(h.used(), h.size());
  EXPECT_EQ(h.unhash(keys.back()), 999u);
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) EXPECT_EQ(h.unhash(keys[i]), i + 1);
  EXPECT_EQ(h.used(), 0u);
}

TEST(PvHash, UndoingAClaimFreesTheSlot) {
  // pv_wait_head_or_lock() finding the lock free after hashing gives the entry back with
  // one store to the returned slot.
  Hash h(4);
  auto* lp = h.hash(fake_lock(1), 7);
  EXPECT_EQ(h.used(), 1u);
  lp->store(0);
  EXPECT_EQ(h.used(), 0u);
}

TEST(PvHashDeathTest, FullTableIsABug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Hash h(2);  // 4 entries
  for (std::uintptr_t i = 1; i <= 4; ++i) h.hash(fake_lock(i), i);
  EXPECT_DEATH(h.hash(fake_lock(5), 5), "the PV lock hash is full");
  EXPECT_DEATH(h.unhash(fake_lock(6)), "_Q_SLOW_VAL without a hash entry");
}

}  // namespace
}  // namespace pvlock
