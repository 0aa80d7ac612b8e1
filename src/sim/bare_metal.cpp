// SPDX-License-Identifier: GPL-2.0-only
#include "sim/bare_metal.hpp"

#include "sim/guest/guest.hpp"

namespace pvlock::sim {

double BareMetal::halt(Vcpu& v) {
  // The kick latch (pv_unhalted) as under KVM, without an exit to pay.
  if (v.pv_unhalted) {
    v.pv_unhalted = false;
    v.halted = false;
  }
  return 0;
}

double BareMetal::kick(Vcpu& from, Vcpu& to) {
  // A kick is an IPI here. An idle CPU wakes from the interrupt itself (no pv_unhalted in
  // hardware to end its HLT first); a CPU in pv_wait, or not halted, sees the kick as KVM's.
  if (!to.halted || to.halt_for_pv) to.guest->kick_arrived(to);
  to.guest->deliver_irq(to, costs_.ipi_handle_ns);
  (void)from;
  return costs_.ipi_send_ns;
}

double BareMetal::send_ipi(Vcpu& from, Vcpu& to, double handler_ns) {
  (void)from;
  to.guest->deliver_irq(to, handler_ns);
  return costs_.ipi_send_ns;
}

}  // namespace pvlock::sim
