// The runner's part of sibling services and per-attempt freshness, kept apart from the
// job loop: the agent's probe tries every sibling, the harness runs isoprobe inside each
// `networkMode: none` sibling through the runtime's exec (the way the trusted harness
// reaches it), and each attempt checks that a process and a DNS answer of the previous
// attempt are gone.
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

// "fresh_process": no process left by an earlier attempt runs in this sandbox.
verify::CheckResult check_fresh_process(transport::SandboxSession& session, int attempt);
// Starts the process the next attempt must not see (detached, bounded in time).
void leave_process_marker(transport::SandboxSession& session);

// "fresh_dns": the sandbox's resolver answers this attempt's own instance name, not the
// previous attempt's. Returns the instance the sandbox saw in *seen.
verify::CheckResult check_fresh_dns(transport::SandboxSession& session, const nlohmann::json& facts,
                                    const std::string& previous_instance, int attempt, std::string* seen);

}  // namespace isoharness::runner
