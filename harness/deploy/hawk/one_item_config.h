// The eval-set config the hawk backend submits for one sandbox: the scenario's eval set
// reduced to one task and one item, with every isolation block untouched, `limit: 1` and
// `epochs: 1`, and the node class's config overrides merged in. A matrix runtime the item's
// plan does not already give (gVisor for a standard item) is asked for the way a user would:
// `runtime_class: <hardened class>` in that item's isolation block. With the profile's
// hawk.human_agent the config names that solver (`solvers:`, in the tasks' own package shape),
// for a start with --no-rewrite; without it the config names no solver and the platform puts
// in the operator's human agent (docs/CONTRACTS.md §4.1).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/scenario/scenario.h"

namespace isoharness::deploy::hawk {

struct OneItem {
  std::size_t task_index = 0;
  std::size_t item_index = 0;
  std::string add_runtime_class;                            // empty: the item is submitted as written
  const scenario::HumanAgentSolver* human_agent = nullptr;  // the solver to name, or none
};

// The `solvers:` list naming one human-agent solver: [{package, name, items: [{name, args}]}],
// where a name "pkg/solver" gives the package's registry name and the solver's (a name
// without '/' is both).
nlohmann::json human_agent_solvers(const scenario::HumanAgentSolver& solver);

// Throws UserError when the indices do not name an item of eval_set. Overrides are merged
// key by key (objects recursively); they may not touch tasks, isolation, limit or epochs.
nlohmann::json one_item_config(const nlohmann::json& eval_set, const OneItem& which,
                               const nlohmann::json& overrides);

// A node class's placement as the submitted config carries it (top-level key
// scenario::kSandboxPlacementKey): {nodeSelector, tolerations}, the chart's own service
// keys, each only when not empty; null when the class names neither (the platform places
// the sandbox as it always does).
nlohmann::json sandbox_placement(const nlohmann::json& node_selector, const nlohmann::json& tolerations);

}  // namespace isoharness::deploy::hawk
