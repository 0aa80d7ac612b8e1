// SPDX-License-Identifier: GPL-2.0-only
#include "twin/twin_locks.hpp"

#include <stdexcept>

#include "native/bench.hpp"

namespace pvlock::twin {
namespace {

std::vector<TwinLock> all_candidates() {
  return {
      {"tas", "tas", {}, "same code"},
      {"ticket", "ticket", {}, "same code"},
      {"mcs", "mcs", {}, "same code"},
      {"qspinlock", "qspinlock", {}, "same code"},
      {"pvqspinlock", "pvqspinlock", {}, "same code; pv_wait/pv_kick are futex wait/wake"},
      {"mutex", "mutex", {}, "same code; block/wake are futex wait/wake"},
      {"rwsem", "rwsem", {}, "same code (write side)"},
      // glibc's lll_lock: one CAS, else mark contended and FUTEX_WAIT; unlock wakes one
      // waiter, who competes again with newcomers. The kernel mutex without optimistic
      // spinning and without hand-off is that protocol.
      {"std_mutex",
       "mutex",
       {"spin_on_owner=false", "mutex_handoff=false"},
       "glibc futex mutex = mutex without owner spinning or hand-off"},
      // glibc's pthread_spin_lock: an atomic exchange, then read-only spinning until free.
      {"pthread_spin", "tas", {}, "test-and-test-and-set, as tas"},
      {"ck_fas", "tas", {}, "fetch-and-store with read-only spinning, as tas"},
      {"ck_ticket", "ticket", {}, "ticket lock"},
      {"ck_mcs", "mcs", {}, "MCS queue lock"},
  };
}

}  // namespace

std::vector<TwinLock> twin_locks() {
  std::vector<TwinLock> out;
  for (TwinLock& t : all_candidates())
    if (native::is_bench_lock(t.native)) out.push_back(std::move(t));
  return out;
}

TwinLock find_twin(const std::string& native) {
  for (const TwinLock& t : twin_locks())
    if (t.native == native) return t;
  throw std::invalid_argument("no simulated twin for lock '" + native +
                              "'; locks with a twin: " + twin_lock_names());
}

std::string twin_lock_names() {
  std::string s;
  for (const TwinLock& t : twin_locks()) s += (s.empty() ? "" : ", ") + t.native;
  return s;
}

std::vector<std::string> default_twin_locks() {
  std::vector<std::string> out;
  for (const TwinLock& t : twin_locks()) out.push_back(t.native);
  return out;
}

}  // namespace pvlock::twin
