// SPDX-License-Identifier: GPL-2.0-only
// The PV lock -> queue-head hash table (qspinlock_paravirt.h: pv_lock_hash, pv_hash(),
// pv_unhash()).
//
// A halted queue head cannot leave a pointer to itself in the 32-bit lock word, so before
// it sets _Q_SLOW_VAL it records {lock, node} here; the unlocker that sees _Q_SLOW_VAL looks
// the lock up to learn which CPU to kick. One table per kernel, sized at boot to at least
// 4 entries per possible CPU (every CPU can have at most 4 nested halted heads, and each
// halted lock takes exactly one entry because only its owner unhashes it) and never less
// than one page (256 16-byte entries); alloc_large_system_hash() then keeps a power of two
// no larger than that, so between powers of two the table holds fewer than 4 entries per
// CPU (80 CPUs: 320 asked, 256 made). Open addressing with linear probing
// that starts at the first entry of a cache line, so a lookup usually touches one line.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "pvlock/env/environment.hpp"
#include "pvlock/lock/check.hpp"

namespace pvlock {

template <Environment Env>
class PvLockHash {
 public:
  using Slot = typename Env::template atomic<std::uintptr_t>;

  // struct pv_hash_entry: 16 bytes on 64-bit.
  struct Entry {
    Slot lock{};  // the lock's address, 0 = free
    Slot node{};  // the halted head's node
  };
  static constexpr std::size_t kCacheLine = 64;
  static constexpr std::size_t kEntriesPerLine = kCacheLine / sizeof(Entry);  // PV_HE_PER_LINE
  static constexpr std::size_t kMinEntries = 4096 / sizeof(Entry);            // PV_HE_MIN

  // __pv_init_lock_hash(): 4 x possible CPUs, whole cache lines, at least a page. It passes
  // that count to alloc_large_system_hash() as the entry count and as its high limit, so the
  // power of two that function rounds up to is clamped back to the count, and the table
  // gets ilog2(count) bits: the count rounded *down* to a power of two. Returns log2 of the
  // number of entries.
  static unsigned bits_for(int possible_cpus) {
    std::size_t n = 4 * static_cast<std::size_t>(std::max(possible_cpus, 1));
    n = (n + kEntriesPerLine - 1) / kEntriesPerLine * kEntriesPerLine;
    n = std::max(n, kMinEntries);
    unsigned bits = 0;
    while ((n >> (bits + 1)) != 0) ++bits;  // ilog2(n)
    return bits;
  }

  // Sized lazily, on first use through Env::global<PvLockHash>(), for this kernel's CPUs.
  PvLockHash() : PvLockHash(bits_for(Env::possible_cpus())) {}
  explicit PvLockHash(unsigned bits)
      : bits_(bits), lines_(new Line[std::max<std::size_t>(size_of(bits) / kEntriesPerLine, 1)]) {}

  std::size_t size() const { return size_of(bits_); }
  unsigned bits() const { return bits_; }

  // hash_ptr(lock, bits) rounded down to its cache line: where probing starts.
  std::size_t home(std::uintptr_t lock) const {
    const std::uint64_t h = static_cast<std::uint64_t>(lock) * kGoldenRatio64;
    const auto slot = static_cast<std::size_t>(h >> (64 - bits_));
    return slot & ~(kEntriesPerLine - 1);
  }

  Entry& entry(std::size_t i) { return lines_[i / kEntriesPerLine].e[i % kEntriesPerLine]; }

  // pv_hash(): claim the first free entry from home(lock) on with cmpxchg 0 -> lock (another
  // CPU may be hashing a different lock into the same line), then publish the node. Returns
  // the claimed entry's lock slot so a caller that finds the lock free after all can give
  // the entry back with one store. Counts the probes in pv_hash_hops, as the kernel does.
  Slot* hash(std::uintptr_t lock, std::uintptr_t node) {
    const std::size_t start = home(lock), mask = size() - 1;
    for (std::size_t offset = 0; offset < size(); ++offset) {
      Entry& he = entry((start + offset) & mask);
      std::uintptr_t expected = 0;
      if (he.lock.compare_exchange(expected, lock, std::memory_order_seq_cst)) {
        he.node.store(node, std::memory_order_relaxed);
        Env::count(LockEvent::pv_hash_hops, offset + 1);
        return &he.lock;
      }
    }
    // Cannot happen: every halted lock holds one entry and there are 4 per CPU (BUG()).
    lock_check_failed("a free entry", "pv_hash(): the PV lock hash is full", __FILE__, __LINE__);
  }

  // pv_unhash(): only the lock's owner calls this, after seeing _Q_SLOW_VAL, so the entry
  // must exist; reading the node before freeing the entry keeps the pair consistent.
  std::uintptr_t unhash(std::uintptr_t lock) {
    const std::size_t start = home(lock), mask = size() - 1;
    for (std::size_t offset = 0; offset < size(); ++offset) {
      Entry& he = entry((start + offset) & mask);
      if (he.lock.load(std::memory_order_relaxed) == lock) {
        const std::uintptr_t node = he.node.load(std::memory_order_relaxed);
        he.lock.store(0, std::memory_order_relaxed);
        return node;
      }
    }
    // Cannot happen: _Q_SLOW_VAL is only ever set after the hash entry was made (BUG()).
    lock_check_failed("an entry for the lock", "pv_unhash(): _Q_SLOW_VAL without a hash entry",
                      __FILE__, __LINE__);
  }

  // Entries in use (tests and diagnostics).
  std::size_t used() {
    std::size_t n = 0;
    for (std::size_t i = 0; i < size(); ++i)
      n += entry(i).lock.load(std::memory_order_relaxed) != 0 ? 1 : 0;
    return n;
  }

 private:
  static constexpr std::uint64_t kGoldenRatio64 = 0x61C8864680B583EBull;  // GOLDEN_RATIO_64
  static constexpr std::size_t size_of(unsigned bits) { return std::size_t{1} << bits; }

  // The table is page-aligned in the kernel; here every line is cache-line aligned.
  struct alignas(kCacheLine) Line {
    Entry e[kEntriesPerLine];
  };

  unsigned bits_;
  std::unique_ptr<Line[]> lines_;
};

}  // namespace pvlock
