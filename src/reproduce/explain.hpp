// SPDX-License-Identifier: GPL-2.0-only
// `pvlock reproduce --explain`: one run's mechanisms in two lines, so that a cell's figure
// comes with why: where the guests' CPU time went (profile, halted share), what the host did
// to the vCPUs (steal, pause-loop exits, directed yields, preemptions of lock holders) and
// the PV slow path's own statistics (halts, wait-early and its vcpu_is_preempted share,
// kick-to-run latency). Rates are per second of measured time.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace pvlock::reproduce {

// With a "series" in the run (harness/series.hpp), the first line is the score per quarter of the
// measured window, so that a cell whose run changes regime mid-window says so.
std::string explain_run(const nlohmann::ordered_json& run);

// The mean VM score in each quarter of the measured window, from the run's series (rows of
// [t_ms, score, ...], each the rate over the interval ending at t_ms): "a / b / c / d unit",
// or "" without a series or when the score is not a rate.
std::string score_quarters(const nlohmann::ordered_json& run);

// The `run --series` interval that makes the quarters of a run's window whole rows: the
// greatest common divisor of the warm-up and a quarter of the window, in ns; 0 when that
// would take more than a few thousand rows (then the quarters are left out).
std::int64_t quarters_series_interval_ns(double warmup_ms, double duration_ms);

}  // namespace pvlock::reproduce
