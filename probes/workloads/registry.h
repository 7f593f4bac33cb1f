// The one explicit list of timing workloads (workload_list.h). Adding a workload: define
// its descriptor in its family's file and add one line to workload_list.h.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "workloads/workload.h"

namespace isoprobe::workloads {

// Every descriptor of workload_list.h.
#define ISOPROBE_WORKLOAD(descriptor) extern const Workload descriptor;
#include "workloads/workload_list.h"
#undef ISOPROBE_WORKLOAD

// Every workload, in the order they run.
std::span<const Workload* const> registered_workloads();

// Looks for a problem in a list of descriptors: a duplicate name, a name that is not
// lower_snake_case, a missing run function or description. Returns the first problem as
// a sentence naming the workload, or nothing when the list is sound.
std::optional<std::string> registry_problem(std::span<const Workload* const> list);

// Finds a workload by name in the registry; nullptr when there is none.
const Workload* find_workload(std::string_view name);

}  // namespace isoprobe::workloads
