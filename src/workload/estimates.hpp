// SPDX-License-Identifier: GPL-2.0-only
// The workloads' default costs: estimates of this model, not measurements (docs/costs.md
// lists each with its plausible range). The workload factories take their defaults from here
// and the constant registry (model/constants.cpp) reads the same values, so the documented
// table cannot drift from what a run uses. Times in ns; `_cv` is a normal distribution's
// coefficient of variation.
#pragma once

namespace pvlock::workload::estimates {

// ebizzy -M: per record, user work, a burst of page faults (the zone and lru locks in
// batches), one madvise(MADV_DONTNEED) with its TLB shootdown.
namespace ebizzy {
inline constexpr int tasks_per_vcpu = 2;
inline constexpr double user_ns = 80'000;
inline constexpr double user_cv = 0.2;
inline constexpr int faults = 128;
inline constexpr double fault_ns = 1'200;
inline constexpr double fault_cv = 0.3;
inline constexpr int lru_batch = 15;  // PAGEVEC_SIZE
inline constexpr double lru_hold_ns = 800;
inline constexpr int zone_batch = 63;  // the per-CPU page list's batch on this size of zone
inline constexpr double zone_hold_ns = 4'000;
inline constexpr double madvise_ns = 15'000;
inline constexpr int madvise_lru_locks = 4;
inline constexpr double madvise_lru_hold_ns = 1'200;
inline constexpr int madvise_zone_locks = 2;
inline constexpr double flush_handler_ns = 1'500;
}  // namespace ebizzy

// hackbench-style messaging over pipes, with the process lifecycle.
namespace messaging {
inline constexpr double send_compute_ns = 700;
inline constexpr double send_hold_ns = 500;
inline constexpr double recv_compute_ns = 500;
inline constexpr double recv_hold_ns = 400;
inline constexpr double fork_ns = 50'000;
inline constexpr double fork_anon_vma_hold_ns = 2'000;
inline constexpr double exit_ns = 25'000;
inline constexpr double exit_anon_vma_hold_ns = 2'000;
inline constexpr double tasklist_hold_ns = 1'000;
inline constexpr double reap_scan_ns = 20;
inline constexpr double i_mmap_hold_ns = 1'000;
}  // namespace messaging

// will-it-scale lock2_threads: an fcntl() call's syscall work around the flc_lock hold.
namespace lock2 {
inline constexpr double compute_ns = 470;
inline constexpr double hold_ns = 150;
}  // namespace lock2

// fio sequential 4 KiB writes to one file: the inode rwsem held for write per write.
namespace fio {
inline constexpr double compute_ns = 1'000;
inline constexpr double hold_ns = 1'500;
}  // namespace fio

}  // namespace pvlock::workload::estimates
