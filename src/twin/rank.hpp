// SPDX-License-Identifier: GPL-2.0-only
// Agreement statistics of `pvlock twin`: Spearman's rank correlation (ties get their mean
// rank) and the oversubscription collapse factor of one lock's curve.
#pragma once

#include <optional>
#include <vector>

namespace pvlock::twin {

// Ranks 1..n, tied values sharing the mean of their ranks.
std::vector<double> ranks(const std::vector<double>& v);
// Pearson correlation of the ranks; nullopt for fewer than 2 points or a constant series.
std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace pvlock::twin
