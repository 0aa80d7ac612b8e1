// SPDX-License-Identifier: GPL-2.0-only
// Peer locks from the C++ and POSIX runtimes, as BasicLockable classes for `pvlock bench`:
// std::mutex (glibc: a futex mutex), pthread_spinlock_t (a pure test-and-set spinner) and
// the glibc adaptive mutex (PTHREAD_MUTEX_ADAPTIVE_NP: spins a bounded number of times on
// the owner, then sleeps on the futex — userspace's closest analogue of the kernel mutex).
#pragma once

#include <pthread.h>

#include <mutex>
#include <stdexcept>

namespace pvlock::native::peers {

class StdMutex {
 public:
  void lock() { m_.lock(); }
  bool try_lock() { return m_.try_lock(); }
  void unlock() { m_.unlock(); }

 private:
  std::mutex m_;
};

class PthreadSpin {
 public:
  PthreadSpin() {
    if (pthread_spin_init(&s_, PTHREAD_PROCESS_PRIVATE) != 0)
      throw std::runtime_error("pthread_spin_init failed");
  }
  ~PthreadSpin() { pthread_spin_destroy(&s_); }
  PthreadSpin(const PthreadSpin&) = delete;
  PthreadSpin& operator=(const PthreadSpin&) = delete;
  void lock() { pthread_spin_lock(&s_); }
  bool try_lock() { return pthread_spin_trylock(&s_) == 0; }
  void unlock() { pthread_spin_unlock(&s_); }

 private:
  pthread_spinlock_t s_;
};

class PthreadAdaptive {
 public:
  PthreadAdaptive() {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    int rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);  // glibc (GNU)
    if (rc == 0) rc = pthread_mutex_init(&m_, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc != 0) throw std::runtime_error("pthread_mutex_init failed");
  }
  ~PthreadAdaptive() { pthread_mutex_destroy(&m_); }
  PthreadAdaptive(const PthreadAdaptive&) = delete;
  PthreadAdaptive& operator=(const PthreadAdaptive&) = delete;
  void lock() { pthread_mutex_lock(&m_); }
  bool try_lock() { return pthread_mutex_trylock(&m_) == 0; }
  void unlock() { pthread_mutex_unlock(&m_); }

 private:
  pthread_mutex_t m_;
};

}  // namespace pvlock::native::peers
