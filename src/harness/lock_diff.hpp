// SPDX-License-Identifier: GPL-2.0-only
// Differential runs of two locks: one scenario, every VM on lock A, then on lock B, over the
// same seeds; per lock event counter and for the score, the two distributions over the
// seeds and whether they agree within the seed spread. `pvlock diff-locks` prints it; it is
// how a kernel:* lock checks its pvlock twin (docs/kernel-in-the-loop.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pvlock::harness {

// One quantity over the seeds, in seed order.
struct SeedSpread {
  std::vector<double> values;
  double min() const;
  double max() const;
  double mean() const;
  bool contains(double x) const { return !values.empty() && x >= min() && x <= max(); }
};

enum class DiffVerdict {
  agree,        // each lock's mean lies within the other's min..max over the seeds
  differ,       // one of them does not
  not_counted,  // a kernel:* lock whose kernel has no such lock event
};
const char* verdict_name(DiffVerdict v);

struct DiffRow {
  std::string name;  // "score" or a lock event
  SeedSpread a, b;
  DiffVerdict verdict = DiffVerdict::agree;
};

struct LockDiff {
  std::string scenario;
  std::string lock_a, lock_b;
  std::vector<std::uint64_t> seeds;
  std::vector<DiffRow> rows;  // "score" first, then the counters of kDiffCounters
};

// The lock events compared: the qspinlock, PV and OSQ counters both kinds of lock keep.
const std::vector<std::string>& diff_counters();

// Whether `lock` counts `event`: pvlock's locks have every counter; a kernel:* lock only
// the events of its kernel's lock_events_list.h (the kernel counts no OSQ events).
bool lock_counts(const std::string& lock, const std::string& event);

// Runs the scenario file (with `sets` applied) once per seed -- the scenario's seed, then
// the following ones -- with every VM's guest.lock set to A, then to B. Throws
// scenario::ScenarioError for a bad file, override or lock name and std::invalid_argument
// for seeds < 1.
LockDiff diff_locks(const std::string& lock_a, const std::string& lock_b,
                    const std::string& scenario_path, const std::vector<std::string>& sets,
                    int seeds);

nlohmann::ordered_json diff_to_json(const LockDiff& d);
std::string diff_to_text(const LockDiff& d);

}  // namespace pvlock::harness
