// SPDX-License-Identifier: GPL-2.0-only
// How far a simulated effect could move with other seeds. An effect is a ratio of two cells,
// each a mean over the experiment's seeds; where runs fall into different regimes (seeds 000
// and 001's over-committed cells) that mean moves a lot from one set of seeds to the next,
// and a verdict against a tolerance band can flip with it. `pvlock reproduce` reports the
// ratio's standard error and whether the verdict holds across two of them.
#pragma once

#include <vector>

namespace pvlock::reproduce {

// Standard error of mean(a) / mean(b) for per-seed figures a and b, propagated to first order
// (delta method): se(r)^2 = r^2 (var_a / (n ma^2) + var_b / (n mb^2) - 2 cov_ab / (n ma mb)).
// Two cells of one experiment run the same seeds, so a[i] and b[i] share run.seed and their
// noise can be correlated (seed 004's two cells move together); the covariance term counts
// that. Vectors of different lengths are taken as independent. 0 when both cells are single
// runs; infinite if a mean is 0 or not finite.
double ratio_standard_error(const std::vector<double>& a, const std::vector<double>& b);

// True if every value within `margin` of `value` gets the same verdict against [low, high]
// as `value` does: inside the band with room to spare, or outside it with room to spare.
bool verdict_resolved(double value, double margin, double low, double high);

}  // namespace pvlock::reproduce
