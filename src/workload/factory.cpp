// The workload types the simulator knows, by [workload] type.
#include <string>

#include "scenario/parse.hpp"
#include "sim/guest/guest.hpp"
#include "workload/lockloop.hpp"
#include "workload/torture.hpp"
#include "workload/workload.hpp"

namespace pvlock::workload {

std::unique_ptr<Workload> make_workload(const scenario::WorkloadSpec& spec, sim::Guest& guest) {
  if (spec.type == "lockloop") return make_lockloop(spec, guest);
  if (spec.type == "torture") return make_torture(spec, guest);
  scenario::fail_at(spec.where, "workload type '" + spec.type +
                                    "' is not available in the simulator yet; available: "
                                    "lockloop, torture");
}

}  // namespace pvlock::workload
