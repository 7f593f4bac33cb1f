// Sibling services: every service of an item other than `default` is its own sandbox.
// Siblings are reachable by default; a service with `networkIsolated: true` (network_mode none) is deny-all
// both ways, and the trusted harness still reaches it through the runtime (exec), not the network. These
// checks judge what the agent's sandbox saw of each sibling (by service name, found through the item's
// resolver, and by address), what a `none` sibling saw from inside, and whether the harness's exec into it
// answered.
//
// The expectation comes from the plan's values (services.<name>.networkIsolated), never from
// the backend's facts: a backend that weakened the policy must not be able to excuse it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/verify/verify.h"

namespace isoharness::verify {

// isoprobe --target values with which the agent tries every deployed sibling
// (the handle's facts.siblings): "sibling-<svc>" by name and "sibling-<svc>-addr" by
// address, both tcp to the sibling's listener.
std::vector<std::string> sibling_target_flags(const std::vector<deploy::SandboxFacts>& siblings);

// One check per planned service other than default, control "sibling:<svc>", from the
// agent's posture (its egress observation).
std::vector<CheckResult> verify_siblings_from_agent(const nlohmann::json& planned_values,
                                                    const std::vector<deploy::SandboxFacts>& siblings,
                                                    const nlohmann::json& agent_posture);

// What a `none` sibling tries from inside: the agent, every other sibling, every world
// target of the backend (by its host, as tcp), the item's resolver, and its own service
// name asked of the item's resolver (which knows it). agent_facts: the handle's facts.
struct IsolationProbe {
  std::vector<std::string> args;   // isoprobe posture arguments (--target ..., --resolver ...)
  std::vector<std::string> names;  // the target names, for verify_none_sibling
};
IsolationProbe isolation_probe(const deploy::SandboxFacts& agent_facts, const deploy::SandboxFacts& sibling,
                               const std::vector<deploy::EgressTarget>& world_targets);

// What the harness saw when it ran isoprobe inside a `none` sibling through the runtime.
struct NoneSiblingObservation {
  std::string service;
  bool exec_answered = false;      // the runtime's exec ran and isoprobe printed its document
  std::string exec_detail;         // the command, its exit status, the head of its stderr
  nlohmann::json posture;          // isoprobe's document from inside (null when none)
  std::vector<std::string> asked;  // target names it was asked to try
};

// "sibling:<svc>:harness_exec" and "sibling:<svc>:isolated".
std::vector<CheckResult> verify_none_sibling(const NoneSiblingObservation& observed);

// For a backend that offers no way into a sibling (the platform gives the harness no exec):
// one n/a check, `sibling:<service>:inside`, saying so; the wall is still judged from the
// agent's side by `sibling:<service>`.
CheckResult none_sibling_not_entered(const std::string& service, const std::string& why);

}  // namespace isoharness::verify
