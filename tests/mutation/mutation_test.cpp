// Mutation checks of the PV protocol: each mutant (include/pvlock/lock/mutation.hpp) must be
// caught (mutual-exclusion violation or liveness watchdog) within kSeeds seeds, the
// unmutated lock must pass all of them, and the table in docs/mutations.md must be what
// this test measures. PVLOCK_UPDATE_DOCS=1 rewrites the table instead of comparing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "mutant_run.hpp"

namespace pvlock::mutation_test {
namespace {

constexpr std::uint64_t kSeeds = 10;
const std::string kDoc = std::string(PVLOCK_SOURCE_DIR) + "/docs/mutations.md";
const std::string kBegin = "<!-- mutation-table:begin -->\n";
const std::string kEnd = "<!-- mutation-table:end -->\n";

struct Row {
  Mutation m;
  const char* name;
  const char* removed;
};

const Row kRows[] = {
    {Mutation::no_kick_at_unlock, "no_kick_at_unlock",
     "`pv_kick()` of the hashed queue head in `__pv_queued_spin_unlock_slowpath()`"},
    {Mutation::no_hash_before_halt, "no_hash_before_halt",
     "`pv_hash()` + `_Q_SLOW_VAL` before the queue head's `pv_wait()`"},
    {Mutation::halted_store_after_check, "halted_store_after_check",
     "order of `smp_store_mb(state, vcpu_halted)` and the `node->locked` re-check in "
     "`pv_wait_node()`"},
    {Mutation::no_pending_while_head_spins, "no_pending_while_head_spins",
     "`set_pending()` while the queue head spins in `pv_wait_head_or_lock()`"},
};

std::string escape(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// Runs every mutant until caught (at most kSeeds seeds) and the unmutated lock on all of
// them; returns the Markdown table.
std::string measure(bool& all_caught, bool& baseline_clean) {
  std::ostringstream t;
  t << "| mutation | step removed | caught by | seeds run | acquisitions before | "
       "first stuck task (watchdog) |\n";
  t << "|---|---|---|---|---|---|\n";
  all_caught = true;
  for (const Row& r : kRows) {
    Outcome o;
    std::uint64_t seed = 1;
    for (; seed <= kSeeds; ++seed) {
      o = run_mutant(r.m, seed);
      if (o.caught()) break;
    }
    const bool caught = o.caught();
    all_caught = all_caught && caught;
    const std::string by = !caught            ? "NOT CAUGHT"
                           : o.violations > 0 ? "torture (mutual-exclusion violation)"
                                              : "liveness watchdog";
    t << "| `" << r.name << "` | " << r.removed << " | " << by << " | " << (caught ? seed : kSeeds)
      << " | " << o.acquisitions << " | " << (o.watchdog ? escape(o.stuck_state) : "-") << " |\n";
  }
  baseline_clean = true;
  std::uint64_t total = 0;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const Outcome o = run_mutant(Mutation::none, seed);
    baseline_clean = baseline_clean && !o.caught() && o.acquisitions > 0;
    total += o.acquisitions;
  }
  t << "| none (unmutated) | - | " << (baseline_clean ? "nothing: passes" : "FAILS") << " | "
    << kSeeds << " | " << total << " (all seeds) | - |\n";
  return t.str();
}

TEST(Mutation, EveryMutantIsCaughtAndTheTableMatchesDocs) {
  bool all_caught = false, baseline_clean = false;
  const std::string table = measure(all_caught, baseline_clean);
  EXPECT_TRUE(all_caught) << table;
  EXPECT_TRUE(baseline_clean) << table;

  std::ifstream in(kDoc);
  ASSERT_TRUE(in) << kDoc;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const auto b = doc.find(kBegin), e = doc.find(kEnd);
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos && b < e) << "markers in " << kDoc;
  const std::string documented = doc.substr(b + kBegin.size(), e - b - kBegin.size());
  if (const char* u = std::getenv("PVLOCK_UPDATE_DOCS"); u != nullptr && std::string(u) == "1") {
    doc.replace(b + kBegin.size(), e - b - kBegin.size(), table);
    std::ofstream(kDoc) << doc;
    return;
  }
  EXPECT_EQ(documented, table) << "docs/mutations.md is out of date; rerun with "
                                  "PVLOCK_UPDATE_DOCS=1 to rewrite it";
}

}  // namespace
}  // namespace pvlock::mutation_test
