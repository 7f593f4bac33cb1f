// The one list of posture probes (probes/posture/probe_list.h) and its validation.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "probes/core/probe.h"

namespace isoprobe {

// Every probe, in the order they run.
std::span<const ProbeDescriptor> all_probes();

// Problems with a list: duplicate or empty names, missing run functions, zero deadlines.
// Empty when the list is sound. isoprobe refuses to run with a broken list.
std::vector<std::string> check_registry(std::span<const ProbeDescriptor> probes);

}  // namespace isoprobe
