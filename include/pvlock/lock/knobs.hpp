// SPDX-License-Identifier: GPL-2.0-only
// The policy knobs by name: how the CLI (`--set name=value`) and scenario files address
// LockPolicies. Each knob names the kernel constant or parameter it stands for and the seed
// that argues about it.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "pvlock/lock/policy.hpp"

namespace pvlock {

struct Knob {
  std::string_view name;
  std::string_view kernel_name;
  std::string_view origin;  // which seed / commit varies it
  std::string_view values;  // human description of the accepted values
  std::string_view description;
  // Returns an error message, or nullopt on success.
  std::function<std::optional<std::string>(LockPolicies&, std::string_view)> set;
  std::function<std::string(const LockPolicies&)> get;
};

namespace knob_detail {

inline std::optional<std::string> parse_u32(std::string_view v, std::uint32_t lo, std::uint32_t hi,
                                            std::uint32_t& out) {
  const bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
  const std::string_view digits = hex ? v.substr(2) : v;
  std::uint32_t x = 0;
  const auto [p, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), x, hex ? 16 : 10);
  if (digits.empty() || ec != std::errc{} || p != digits.data() + digits.size())
    return "expected an unsigned integer, got '" + std::string(v) + "'";
  if (x < lo || x > hi)
    return "value " + std::to_string(x) + " out of range [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]";
  out = x;
  return std::nullopt;
}

inline std::optional<std::string> parse_bool(std::string_view v, bool& out) {
  if (v == "true" || v == "1" || v == "on") {
    out = true;
    return std::nullopt;
  }
  if (v == "false" || v == "0" || v == "off") {
    out = false;
    return std::nullopt;
  }
  return "expected true or false, got '" + std::string(v) + "'";
}

inline std::string wait_early_name(WaitEarlyRule r) {
  switch (r) {
    case WaitEarlyRule::prev_halted:
      return "prev_halted";
    case WaitEarlyRule::prev_halted_or_preempted:
      return "prev_halted_or_preempted";
    case WaitEarlyRule::never:
      return "never";
  }
  return "?";
}

// A kernel:* name is the kernel's own spinlock code (RawSpinlockKind::external); whether this
// build has it is checked where the world is built (resolve_raw_spinlock in registry.hpp).
inline std::optional<std::string> parse_raw_spinlock(std::string_view v, LockPolicies& p) {
  if (v.starts_with("kernel:") && v.size() > 7) {
    p.raw_spinlock = RawSpinlockKind::external;
    p.raw_spinlock_name = std::string(v);
    return std::nullopt;
  }
  for (const RawSpinlockKind k :
       {RawSpinlockKind::automatic, RawSpinlockKind::tas, RawSpinlockKind::ticket,
        RawSpinlockKind::mcs, RawSpinlockKind::qspinlock, RawSpinlockKind::pvqspinlock}) {
    if (v == raw_spinlock_kind_name(k)) {
      p.raw_spinlock = k;
      p.raw_spinlock_name.clear();
      return std::nullopt;
    }
  }
  return "expected auto, tas, ticket, mcs, qspinlock, pvqspinlock or a kernel:* spinlock, got '" +
         std::string(v) + "'";
}

inline std::string raw_spinlock_setting(const LockPolicies& p) {
  return p.raw_spinlock == RawSpinlockKind::external ? p.raw_spinlock_name
                                                     : raw_spinlock_kind_name(p.raw_spinlock);
}

}  // namespace knob_detail

inline std::span<const Knob> all_knobs() {
  using namespace knob_detail;
  static const Knob knobs[] = {
      {"pending_loops", "_Q_PENDING_LOOPS", "qspinlock.c (x86: 512)", "1..65536",
       "re-reads of a pending-only word before queueing",
       [](LockPolicies& p, std::string_view v) {
         return parse_u32(v, 1, 65536, p.qspinlock.pending_loops);
       },
       [](const LockPolicies& p) { return std::to_string(p.qspinlock.pending_loops); }},
      {"spin_threshold", "SPIN_THRESHOLD", "x86 spinlock.h (1 << 15)", "1..1073741824",
       "PV waiter (pvqspinlock, pvticket) spins this many cpu_relax() iterations before halting",
       [](LockPolicies& p, std::string_view v) {
         return parse_u32(v, 1, 1u << 30, p.qspinlock.spin_threshold);
       },
       [](const LockPolicies& p) { return std::to_string(p.qspinlock.spin_threshold); }},
      {"prev_check_mask", "PV_PREV_CHECK_MASK", "qspinlock_paravirt.h (0xff)", "2^k - 1, 0..65535",
       "pv_wait_early() looks at the predecessor every mask+1 iterations",
       [](LockPolicies& p, std::string_view v) -> std::optional<std::string> {
         std::uint32_t x = 0;
         if (auto e = parse_u32(v, 0, 65535, x)) return e;
         if ((x & (x + 1)) != 0) return "must be one less than a power of two (e.g. 0xff)";
         p.qspinlock.prev_check_mask = x;
         return std::nullopt;
       },
       [](const LockPolicies& p) { return std::to_string(p.qspinlock.prev_check_mask); }},
      {"wait_early", "pv_wait_early()",
       "cd0272fab785 (v4.5); seed 000 (75437bb304b2 vs revert 89340d0935c9)",
       "prev_halted | prev_halted_or_preempted | never",
       "when a queued PV waiter stops spinning early and halts",
       [](LockPolicies& p, std::string_view v) -> std::optional<std::string> {
         if (v == "prev_halted")
           p.qspinlock.wait_early = WaitEarlyRule::prev_halted;
         else if (v == "prev_halted_or_preempted")
           p.qspinlock.wait_early = WaitEarlyRule::prev_halted_or_preempted;
         else if (v == "never")
           p.qspinlock.wait_early = WaitEarlyRule::never;
         else
           return "expected prev_halted, prev_halted_or_preempted or never, got '" +
                  std::string(v) + "'";
         return std::nullopt;
       },
       [](const LockPolicies& p) { return wait_early_name(p.qspinlock.wait_early); }},
      {"hybrid_stealing", "pv_hybrid_queued_unfair_trylock", "11752adb (hybrid PV queued/unfair)",
       "true | false",
       "PV: steal the lock while the queue head is not spinning (needs lock_stealing)",
       [](LockPolicies& p, std::string_view v) {
         return parse_bool(v, p.qspinlock.hybrid_stealing);
       },
       [](const LockPolicies& p) {
         return std::string(p.qspinlock.hybrid_stealing ? "true" : "false");
       }},
      {"lock_stealing", "pv_queued_spin_steal_lock", "1c4941fd53af (v4.5)", "true | false",
       "PV: a slow-path entrant may steal past the queue (false: the FIFO lock of 4.2-4.4)",
       [](LockPolicies& p, std::string_view v) { return parse_bool(v, p.qspinlock.lock_stealing); },
       [](const LockPolicies& p) {
         return std::string(p.qspinlock.lock_stealing ? "true" : "false");
       }},
      {"kick_at_unlock", "vcpu_hashed (pv_kick_node)", "75d2270280686 (v4.3)", "true | false",
       "PV: a halted successor is kicked only by the unlock (false: 4.2's kick at MCS hand-off)",
       [](LockPolicies& p, std::string_view v) {
         return parse_bool(v, p.qspinlock.kick_at_unlock);
       },
       [](const LockPolicies& p) {
         return std::string(p.qspinlock.kick_at_unlock ? "true" : "false");
       }},
      {"virt_spin_lock", "virt_spin_lock_key", "seed 002 (novirtspin)", "true | false",
       "native qspinlock slow path becomes test-and-set",
       [](LockPolicies& p, std::string_view v) {
         return parse_bool(v, p.qspinlock.virt_spin_lock);
       },
       [](const LockPolicies& p) {
         return std::string(p.qspinlock.virt_spin_lock ? "true" : "false");
       }},
      {"break_on_prev_preempted", "osq_lock vcpu_is_preempted(prev)", "seed 003", "true | false",
       "OSQ waiter leaves the queue when its predecessor's vCPU is preempted",
       [](LockPolicies& p, std::string_view v) {
         return parse_bool(v, p.osq.break_on_prev_preempted);
       },
       [](const LockPolicies& p) {
         return std::string(p.osq.break_on_prev_preempted ? "true" : "false");
       }},
      {"preempt_check_period", "{mutex,rwsem}_spin_on_owner loop & 0xff", "seed 004", "0..65536",
       "owner-spin consults vcpu_is_preempted every N iterations (0: never, pre-v4.9)",
       [](LockPolicies& p, std::string_view v) {
         return parse_u32(v, 0, 65536, p.owner_spin.preempt_check_period);
       },
       [](const LockPolicies& p) { return std::to_string(p.owner_spin.preempt_check_period); }},
      {"mutex_handoff", "MUTEX_FLAG_HANDOFF", "9d659ae14b54 (v4.10)", "true | false",
       "a woken first mutex waiter that loses claims the next unlock (false: pre-v4.10)",
       [](LockPolicies& p, std::string_view v) { return parse_bool(v, p.handoff.mutex); },
       [](const LockPolicies& p) { return std::string(p.handoff.mutex ? "true" : "false"); }},
      {"mutex_trylock", "__mutex_trylock_or_owner / __mutex_trylock_common",
       "048661a1f963, ad90880dc962 (v5.15)", "or_owner | common",
       "how the first mutex waiter raises HANDOFF (or_owner: once, by a separate OR, v4.10-5.14)",
       [](LockPolicies& p, std::string_view v) -> std::optional<std::string> {
         if (v == "or_owner")
           p.handoff.mutex_trylock = MutexTrylock::or_owner;
         else if (v == "common")
           p.handoff.mutex_trylock = MutexTrylock::common;
         else
           return "expected or_owner or common, got '" + std::string(v) + "'";
         return std::nullopt;
       },
       [](const LockPolicies& p) {
         return std::string(p.handoff.mutex_trylock == MutexTrylock::or_owner ? "or_owner"
                                                                              : "common");
       }},
      {"rwsem_handoff", "RWSEM_FLAG_HANDOFF", "4f23dbc1e657 (v5.3)", "true | false",
       "an rwsem waiter older than 4 ms stops stealing and is next (false: pre-v5.3)",
       [](LockPolicies& p, std::string_view v) { return parse_bool(v, p.handoff.rwsem); },
       [](const LockPolicies& p) { return std::string(p.handoff.rwsem ? "true" : "false"); }},
      {"rwsem_reader_spin", "RWSEM_RD_NONSPINNABLE", "cf69482d62d9 (v5.3) - 617f3ef95177 (v5.11)",
       "true | false", "rwsem readers spin on the OSQ like writers (true: v5.3-v5.10)",
       [](LockPolicies& p, std::string_view v) { return parse_bool(v, p.rwsem.reader_spin); },
       [](const LockPolicies& p) { return std::string(p.rwsem.reader_spin ? "true" : "false"); }},
      {"rwsem_handoff_set", "rwsem_waiter.handoff_set", "6eebd5fb2083 (v5.19)",
       "setter | first_waiter",
       "whose the rwsem HANDOFF bit is (setter: the writer that set it, any bit stops later "
       "writers; before v5.19)",
       [](LockPolicies& p, std::string_view v) -> std::optional<std::string> {
         if (v == "setter")
           p.handoff.rwsem_handoff_set = RwsemHandoffSet::setter;
         else if (v == "first_waiter")
           p.handoff.rwsem_handoff_set = RwsemHandoffSet::first_waiter;
         else
           return "expected setter or first_waiter, got '" + std::string(v) + "'";
         return std::nullopt;
       },
       [](const LockPolicies& p) {
         return std::string(
             p.handoff.rwsem_handoff_set == RwsemHandoffSet::setter ? "setter" : "first_waiter");
       }},
      {"spin_on_owner", "CONFIG_MUTEX_SPIN_ON_OWNER", "mutex.c / rwsem.c", "true | false",
       "mutex/rwsem optimistic spinning on a running owner",
       [](LockPolicies& p, std::string_view v) {
         return parse_bool(v, p.owner_spin.spin_on_owner);
       },
       [](const LockPolicies& p) {
         return std::string(p.owner_spin.spin_on_owner ? "true" : "false");
       }},
      {"wait_lock", "raw_spinlock_t (mutex/rwsem wait_lock)", "kvm_spinlock_init()",
       "auto | tas | ticket | mcs | qspinlock | pvqspinlock | kernel:[<variant>/](pv)qspinlock",
       "the spinlock guarding the mutex and rwsem wait lists (auto: the kernel's at boot)",
       [](LockPolicies& p, std::string_view v) { return parse_raw_spinlock(v, p); },
       [](const LockPolicies& p) { return raw_spinlock_setting(p); }},
  };
  return knobs;
}

inline const Knob* find_knob(std::string_view name) {
  for (const Knob& k : all_knobs())
    if (k.name == name) return &k;
  return nullptr;
}

// Applies "name=value". Returns an error message naming the knob, or nullopt.
inline std::optional<std::string> apply_knob_assignment(LockPolicies& p, std::string_view kv) {
  const auto eq = kv.find('=');
  if (eq == std::string_view::npos) return "expected name=value, got '" + std::string(kv) + "'";
  const auto name = kv.substr(0, eq);
  const Knob* k = find_knob(name);
  if (k == nullptr) {
    std::string msg = "unknown knob '" + std::string(name) + "'; knobs:";
    for (const Knob& x : all_knobs()) msg += " " + std::string(x.name);
    return msg;
  }
  if (auto err = k->set(p, kv.substr(eq + 1))) return "knob '" + std::string(name) + "': " + *err;
  return std::nullopt;
}

}  // namespace pvlock
