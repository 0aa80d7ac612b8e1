// SPDX-License-Identifier: GPL-2.0-only
// Seeded generators. Every component (task, vCPU, host scheduler...) owns one generator,
// derived from the scenario seed and the component's id, so adding a component never shifts
// another component's random stream and results stay reproducible.
#pragma once

#include <cstdint>

namespace pvlock::sim {

// splitmix64: used to derive seeds (good avalanche on consecutive inputs).
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A seed for component `id` of kind `domain` (e.g. domain 1 = tasks, id = task number).
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t domain, std::uint64_t id) {
  std::uint64_t s = seed;
  std::uint64_t a = splitmix64(s);
  s = a ^ (domain * 0xD1B54A32D192ED03ull);
  std::uint64_t b = splitmix64(s);
  s = b ^ (id * 0x8CB92BA72F3D8DD7ull);
  return splitmix64(s);
}

// xoshiro256**: the per-component generator.
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 1) { reseed(seed); }
  void reseed(std::uint64_t seed) {
    std::uint64_t s = seed;
    for (auto& x : s_) x = splitmix64(s);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n).
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace pvlock::sim
