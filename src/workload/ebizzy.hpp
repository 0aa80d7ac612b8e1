// SPDX-License-Identifier: GPL-2.0-only
// ebizzy -M in a guest (seeds 000 and 001): 2 CPU-bound tasks per vCPU; one record =
//   user work (memcpy + bsearch of a 512 KiB chunk),
//   ~128 anonymous page faults, each some kernel work, every lru_batch-th one adding the
//   pages to the LRU under the VM-global lru_lock and every zone_batch-th one refilling the
//   per-CPU page lists under the VM-global zone->lock (both spin_lock_irq*),
//   madvise(MADV_DONTNEED) from glibc's heap trimming: kernel work (zapping the PTEs),
//   a synchronous TLB shootdown (an IPI to every other vCPU of the VM and a spin, IRQs
//   on and preemption off, until each has run the flush handler), then LRU removal and
//   page freeing under the same locks: tlb_finish_mmu() flushes before it frees. A target
//   takes the IPI only when it runs with IRQs on; with pv_tlb_flush a preempted target is
//   skipped (flushed by the host at its next entry).
// Every fault and the madvise run under mmap_sem for read (down_read/up_read of the
// library's RwSem: no writer with -M, so only the reader count's atomics on one cache line
// shared by all vCPUs, the line every page fault of the process bounces).
// Score: records per second in the VM.
//
// [workload] type = "ebizzy", tasks_per_vcpu = 2, user_ns = <dist>, faults = 128,
//   fault_ns = <dist>, lru_batch = 15, lru_hold_ns = <dist>, zone_batch = 63,
//   zone_hold_ns = <dist>, madvise_ns = <dist>, madvise_lru_locks = 4, madvise_zone_locks = 2,
//   flush_handler_ns = <dist>, shootdown = true, mmap_sem = true
#pragma once

#include <memory>

#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

std::unique_ptr<Workload> make_ebizzy(const scenario::WorkloadSpec& spec, sim::Guest& guest);

}  // namespace pvlock::workload
