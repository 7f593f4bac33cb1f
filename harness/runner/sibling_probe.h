// The runner's part of sibling services, kept apart from the job loop: the agent's probe
// tries every sibling, and the harness runs isoprobe inside each `networkMode: none`
// sibling through the runtime's exec (the way the trusted harness reaches it).
// Per-attempt freshness is in attempt_freshness.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/transport/transport.h"
#include "harness/verify/verify.h"

namespace isoharness::runner {

// Appends "--target sibling-<svc>=..." for every sibling in the handle's facts.
void add_sibling_targets(const nlohmann::json& facts, std::vector<std::string>& argv);

// Appends the sibling checks to record["checks"]: from the agent's posture, then from
// inside each `none` sibling (exec through the runtime); what the none side saw goes to
// record["siblings"]. planned_values: the plan item's values.
void check_siblings(const nlohmann::json& planned_values, const nlohmann::json& facts,
                    const nlohmann::json& agent_posture,
                    const std::vector<deploy::EgressTarget>& world_targets, nlohmann::json& record);

}  // namespace isoharness::runner
