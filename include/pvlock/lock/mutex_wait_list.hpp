// SPDX-License-Identifier: GPL-2.0-only
// The wait list of a sleeping lock (mutex->wait_list, rw_semaphore->wait_list): an intrusive
// FIFO of waiter records that live on the sleeping tasks' stacks, protected by the lock's
// wait_lock. Shared by mutex.hpp and rwsem.hpp.
//
// One read happens without wait_lock, as in the kernel: a woken mutex waiter asks "am I
// first?" (__mutex_waiter_is_first) before retaking wait_lock. The head pointer is therefore
// an Env atomic, read relaxed; a stale answer only costs a retry.
#pragma once

#include <atomic>
#include <cstdint>

#include "pvlock/env/environment.hpp"

namespace pvlock {

// W must have plain members `W* next` and `W* prev`, touched only under wait_lock.
template <Environment Env, class W>
class WaitList {
 public:
  bool empty() const { return first_.load(std::memory_order_relaxed) == 0; }
  W* front() const { return from_word(first_.load(std::memory_order_relaxed)); }
  // list_is_singular(): exactly one waiter.
  bool singular() const { return !empty() && front() == last_; }
  // Lockless "is w the first waiter?" (may be stale; callers re-check under wait_lock).
  bool is_first(const W* w) const {
    return first_.load(std::memory_order_relaxed) == reinterpret_cast<std::uintptr_t>(w);
  }

  // list_add_tail(): FIFO.
  void push_back(W* w) {
    w->next = nullptr;
    w->prev = last_;
    if (last_ != nullptr)
      last_->next = w;
    else
      first_.store(to_word(w), std::memory_order_relaxed);
    last_ = w;
  }

  // list_del().
  void remove(W* w) {
    if (w->prev != nullptr)
      w->prev->next = w->next;
    else
      first_.store(to_word(w->next), std::memory_order_relaxed);
    if (w->next != nullptr)
      w->next->prev = w->prev;
    else
      last_ = w->prev;
    w->next = w->prev = nullptr;
  }

 private:
  static std::uintptr_t to_word(W* w) { return reinterpret_cast<std::uintptr_t>(w); }
  static W* from_word(std::uintptr_t v) { return reinterpret_cast<W*>(v); }

  typename Env::template atomic<std::uintptr_t> first_{};
  W* last_ = nullptr;
};

}  // namespace pvlock
