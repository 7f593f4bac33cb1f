// Helpers for the policy and scenario unit tests: plan YAML text against a deployment.
#pragma once

#include <string>

#include "harness/policy/plan.h"
#include "harness/scenario/scenario.h"

namespace isoharness::test {

// The local profile as scenarios/deployments/local.yaml has it.
inline const char* kLocalDeployment = R"(
name: local
backend: local
runtime_classes: [gvisor]
sandbox_runtime_class: gvisor
sandbox_runtime_class_is_default: false
runtime_handlers: { gvisor: runsc }
node_classes: { tier: {cpuset: "1"}, non-tier: {cpuset: "0-1"} }
)";

// A platform-like profile: the hardened class is also the default.
inline const char* kPlatformDeployment = R"(
name: platform
runtime_classes: [gvisor, kata]
sandbox_runtime_class: gvisor
runtime_handlers: { gvisor: runsc, kata: kata-runtime }
)";

// hawk:enableGvisor only: gVisor offered, no hardened class configured.
inline const char* kNoHardenedDeployment = R"(
name: no-hardened
runtime_classes: [gvisor]
)";

inline policy::Plan plan_yaml(const std::string& yaml, const char* deployment = kLocalDeployment,
                              const policy::PlanOptions& options = {}) {
  auto s = scenario::parse_scenario(yaml, "test.yaml");
  auto d = scenario::parse_deployment(deployment, "deployment.yaml");
  return policy::plan_scenario(s, d, options);
}

inline std::string all_errors(const policy::Plan& plan) {
  std::string out;
  for (const auto& e : plan.errors) out += e.to_string() + "\n";
  return out;
}

inline bool has_finding(const policy::PlanItem& item, const std::string& code) {
  for (const auto& f : item.findings) {
    if (f.code == code) return true;
  }
  return false;
}

}  // namespace isoharness::test
