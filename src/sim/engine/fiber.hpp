// SPDX-License-Identifier: GPL-2.0-only
// A guest task's execution context: a Boost.Context fiber on a lazily committed stack
// (fiber_stack.hpp).
//
// The simulation loop resume()s a fiber; code inside it calls yield() to hand control back.
// Only one fiber of a simulation runs at a time, so simulated concurrency is an interleaving
// chosen by the event queue, never real parallelism.
#pragma once

#include <boost/context/fiber.hpp>
#include <cstddef>
#include <functional>
#include <utility>

#include "sim/engine/fiber_stack.hpp"

namespace pvlock::sim {

class Fiber {
 public:
  Fiber() = default;
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Prepares the fiber; `body` runs on the first resume(). When it returns the fiber is done.
  void start(std::function<void()> body) {
    body_ = std::move(body);
    ctx_ = boost::context::fiber(std::allocator_arg, PooledStack{},
                                 [this](boost::context::fiber&& caller) {
                                   caller_ = std::move(caller);
                                   run_fiber_body(body_);
                                   done_ = true;
                                   return std::move(caller_);
                                 });
  }
  // From the scheduler: run the fiber until it yields or finishes.
  void resume() { ctx_ = std::move(ctx_).resume(); }
  // From inside the fiber: back to whoever resumed it.
  void yield() { caller_ = std::move(caller_).resume(); }
  bool done() const { return done_; }
  bool started() const { return static_cast<bool>(ctx_) || done_; }

 private:
  std::function<void()> body_;
  boost::context::fiber ctx_;
  boost::context::fiber caller_;
  bool done_ = false;
};

}  // namespace pvlock::sim
