// Named workload mixes of a scenario (`mixes:`), internal to harness/scenario.
//
//   workloads: [ {name: compile_c, weight: 2}, {name: ssh_rtt, weight: 3}, ... ]
//   mixes:
//     compile_heavy: { compile_c: 4, spawn_exec: 2, shell_pipeline: 1 }
//     reading: { weights: { ssh_rtt: 3, shell_pipeline: 1 }, compute_fraction: 0.2 }
//
// Each mix weighs workloads the scenario times (names from `workloads`), each weight a
// finite number >= 0 with a positive sum. "default" is reserved: it is the weights of
// `workloads` themselves. The long form (a mapping with `weights`) may also state
// `compute_fraction`, in [0, 1]: the share of that task family's human time that is
// sandbox compute (s.mix_compute_fractions).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "harness/common/error.h"
#include "harness/scenario/scenario.h"

namespace isoharness::scenario {

inline constexpr const char* kDefaultMixName = "default";

// Reads `mixes` into s.mixes; every problem is appended to errors with its place.
void read_named_mixes(const nlohmann::json& mixes, Scenario& s, std::vector<Diagnostic>& errors);

}  // namespace isoharness::scenario
