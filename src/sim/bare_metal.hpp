// SPDX-License-Identifier: GPL-2.0-only
// Bare metal: one OS directly on the machine. Every vCPU is the physical CPU of the same
// number and always runs; HLT just waits for an interrupt; pv_kick (only used if a PV lock
// is configured anyway) and reschedule IPIs are plain IPIs, delivered at once.
#pragma once

#include "scenario/scenario.hpp"
#include "sim/platform.hpp"

namespace pvlock::sim {

class BareMetal final : public Platform {
 public:
  explicit BareMetal(const scenario::Costs& costs) : costs_(costs) {}
  void attach(Simulation&) override {}
  bool pv_unhalt(const Guest&) const override { return false; }
  double halt(Vcpu& v) override;
  double kick(Vcpu& from, Vcpu& to) override;
  double send_ipi(Vcpu& from, Vcpu& to, double handler_ns) override;
  bool on_event(const Event&) override { return true; }

 private:
  scenario::Costs costs_;
};

}  // namespace pvlock::sim
