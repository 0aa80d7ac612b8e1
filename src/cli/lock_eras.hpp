// SPDX-License-Identifier: GPL-2.0-only
// Which upstream era each built-in lock algorithm follows, for `pvlock locks` (the era
// switches inside them are set by a scenario's guest profile: docs/eras.md).
#pragma once

#include <string_view>

namespace pvlock::cli {

struct LockEra {
  std::string_view lock;
  std::string_view era;
};

inline constexpr LockEra kLockEras[] = {
    {"tas", "no kernel era: the shape of virt_spin_lock()'s test-and-set fallback"},
    {"ticket", "x86 ticket spinlock, before qspinlock became x86's spinlock (v4.2)"},
    {"pvticket",
     "v3.12-3.19 (arch/x86 spinlock.h + kvm.c kvm_lock_spinning/kvm_unlock_kick; the tail's "
     "TICKET_SLOWPATH_FLAG); v4.0's flag in the head (d6abfdb2) not modelled"},
    {"mcs", "no kernel era: the textbook MCS lock (the kernel's is qspinlock's queue)"},
    {"qspinlock", "kernel/locking/qspinlock.c as reviewed against v6.1-6.12"},
    {"pvqspinlock",
     "qspinlock_paravirt.h as reviewed against v6.1-6.12; the guest profile sets its history: "
     "4.2 (a23db284fe0d) no stealing, no wait-early, kick at MCS hand-off; 4.3-4.4 kick at "
     "unlock (75d2270280686); 4.5-4.7 one steal at slow-path entry and wait-early on a halted "
     "prev (1c4941fd53af, cd0272fab785); 4.8+ hybrid stealing (11752adb); wait_early "
     "prev_halted_or_preempted 4.11-5.3; the pre-4.8 double-hash race not modelled"},
    {"mutex",
     "v4.10+; mutex_handoff (off before v4.10) and mutex_trylock (or_owner v4.10-5.14: "
     "__mutex_trylock_or_owner and a separate HANDOFF request; common v5.15+: "
     "__mutex_trylock_common) follow the guest profile"},
    {"rwsem",
     "v5.11+ structure as in 6.1.y (reader stealing, no reader optimistic spinning); "
     "rwsem_handoff (off before v5.3) and rwsem_handoff_set (setter before v5.19, "
     "6eebd5fb2083: first_waiter) follow the guest profile, and so does rwsem_reader_spin: "
     "the v5.3-v5.10 readers' OSQ spinning with RD/WR_NONSPINNABLE, in place of stealing; "
     "the pre-5.16 writer wait states are not modelled"},
    {"busted", "none: a negative control"},
};

// The era of `lock`, or "" if the table has none (kernel:* locks say what they were built
// from instead).
inline std::string_view lock_era(std::string_view lock) {
  for (const LockEra& e : kLockEras)
    if (e.lock == lock) return e.era;
  return {};
}

}  // namespace pvlock::cli
