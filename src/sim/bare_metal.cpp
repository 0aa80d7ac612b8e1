// SPDX-License-Identifier: GPL-2.0-only
#include "sim/bare_metal.hpp"

#include "sim/guest/guest.hpp"

namespace pvlock::sim {

double BareMetal::kick(Vcpu& from, Vcpu& to) {
  to.guest->kick_arrived(to);
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
