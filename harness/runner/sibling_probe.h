// The runner's part of sibling services, kept apart from the job loop: the agent's probe
// tries every sibling, and the harness runs isoprobe inside each `networkIsolated: true` (network_mode none)
// sibling through the runtime's exec (the way the trusted harness reaches it).
// Per-attempt freshness is in attempt_freshness.h.
#pragma once

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/runner/attempt_record.h"
#include "harness/transport/transport.h"
#include "harness/verify/verify.h"

namespace isoharness::runner {

// Appends "--target sibling-<svc>=..." for every sibling in the handle's facts.
void add_sibling_targets(const deploy::SandboxFacts& facts, std::vector<std::string>& argv);

// isoprobe inside each `networkIsolated: true` (network_mode none) sibling (exec through the runtime, argv
// from the backend's facts), started on construction so that it runs beside the agent's own probe instead of
// after it; each waits on its blocked targets for egress_deadline (the deployment profile's). The destructor
// waits for any not collected.
class NoneSiblingProbes {
 public:
  NoneSiblingProbes(const nlohmann::json& planned_values, const deploy::SandboxFacts& facts,
                    const std::vector<deploy::EgressTarget>& world_targets,
                    std::chrono::milliseconds egress_deadline);
  ~NoneSiblingProbes();
  NoneSiblingProbes(const NoneSiblingProbes&) = delete;
  NoneSiblingProbes& operator=(const NoneSiblingProbes&) = delete;
  // Waits for each and adds its checks, and what it saw by service, to `into`.
  void collect(SiblingRecord& into);

 private:
  struct Outcome {
    std::vector<verify::CheckResult> checks;
    std::optional<NoneSiblingSeen> seen;
  };
  std::vector<std::pair<std::string, std::future<Outcome>>> running_;
};

// The sibling checks: from the agent's posture, then from inside each `none` sibling.
// planned_values: the plan item's values.
SiblingRecord check_siblings(const nlohmann::json& planned_values, const deploy::SandboxFacts& facts,
                             const nlohmann::json& agent_posture, NoneSiblingProbes& none_siblings);

}  // namespace isoharness::runner
