// SPDX-License-Identifier: GPL-2.0-only
// A fixed-size set of physical CPU ids (the sharers of a cache line).
#pragma once

#include <array>
#include <cstdint>

namespace pvlock::sim {

inline constexpr int kMaxCpus = 256;

class CpuSet {
 public:
  bool has(int cpu) const { return (w_[idx(cpu)] >> bit(cpu)) & 1u; }
  void add(int cpu) { w_[idx(cpu)] |= std::uint64_t{1} << bit(cpu); }
  void clear() { w_ = {}; }
  bool empty() const { return (w_[0] | w_[1] | w_[2] | w_[3]) == 0; }
  // Calls f(cpu) for each member in increasing order.
  template <class F>
  void for_each(F&& f) const {
    for (int i = 0; i < 4; ++i)
      for (std::uint64_t m = w_[static_cast<std::size_t>(i)]; m != 0; m &= m - 1)
        f(i * 64 + __builtin_ctzll(m));
  }

 private:
  static std::size_t idx(int cpu) { return static_cast<std::size_t>(cpu) >> 6; }
  static int bit(int cpu) { return cpu & 63; }
  std::array<std::uint64_t, 4> w_{};
};

}  // namespace pvlock::sim
