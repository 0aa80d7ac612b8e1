// SPDX-License-Identifier: GPL-2.0-only
// Other processes' load on this machine: the mean number of runnable threads /proc/stat
// reports (procs_running), sampled while pvlock itself only samples. On a shared machine
// this is what the native cells compete with, beside the hypervisor's steal.
#pragma once

namespace pvlock::twin {

// Samples procs_running every 5 ms for `window_s` and returns the mean, less the sampling
// thread itself (never below 0). 0 if /proc/stat is unreadable.
double background_runnable(double window_s);

}  // namespace pvlock::twin
