// SPDX-License-Identifier: GPL-2.0-only
#include "sim/invariant.hpp"

#include <cstdio>
#include <cstdlib>

#include "sim/context.hpp"
#include "sim/simulation.hpp"

namespace pvlock::sim {

void invariant_failed(const char* cond, const char* what, const char* file, int line) {
  // stdio, not fmt or iostreams: this may run on a fiber's small stack.
  if (const Simulation* s = tl_ctx.sim; s != nullptr)
    std::fprintf(stderr, "pvlock: simulator invariant violated at t=%lld ns: %s (%s) [%s:%d]\n",
                 static_cast<long long>(s->now()), what, cond, file, line);
  else
    std::fprintf(stderr, "pvlock: simulator invariant violated: %s (%s) [%s:%d]\n", what, cond,
                 file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace pvlock::sim
