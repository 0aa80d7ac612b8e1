// SPDX-License-Identifier: GPL-2.0-only
// The peer locks `pvlock bench` compares pvlock's locks against, by name, iterated the way
// registry.hpp iterates pvlock's own locks. Which peers exist depends on what the build found
// (ck headers, abseil); a peer that is not built is simply not listed.
#pragma once

#include <string_view>

#include "native/peers/absl_peer.hpp"
#include "native/peers/ck_peers.hpp"
#include "native/peers/posix_peers.hpp"

namespace pvlock::native::peers {

struct PeerInfo {
  std::string_view name;
  std::string_view description;
};

// Calls f.template operator()<LockType>(const PeerInfo&) for every peer lock.
template <class F>
void for_each_peer(F&& f) {
  f.template operator()<StdMutex>(PeerInfo{"std_mutex", "std::mutex (glibc futex mutex)"});
  f.template operator()<PthreadSpin>(
      PeerInfo{"pthread_spin", "pthread_spinlock_t (glibc test-and-set spinner)"});
  f.template operator()<PthreadAdaptive>(PeerInfo{
      "pthread_adaptive", "PTHREAD_MUTEX_ADAPTIVE_NP (glibc: bounded spin, then futex sleep)"});
#if PVLOCK_HAVE_CK
  f.template operator()<CkFas>(PeerInfo{"ck_fas", "Concurrency Kit fetch-and-store spinlock"});
  f.template operator()<CkTicket>(PeerInfo{"ck_ticket", "Concurrency Kit ticket spinlock"});
  f.template operator()<CkMcs>(PeerInfo{"ck_mcs", "Concurrency Kit MCS queue spinlock"});
#endif
#if defined(PVLOCK_HAVE_ABSL) && PVLOCK_HAVE_ABSL
  f.template operator()<AbslMutex>(PeerInfo{"absl_mutex", "abseil absl::Mutex"});
#endif
}

}  // namespace pvlock::native::peers
