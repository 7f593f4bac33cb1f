// Expanding planned scenarios into sandbox jobs: item × runtime × node class, each job
// carrying the plan item whose expectations apply under that runtime.
//
// A runtime in the matrix is honoured only where the config allows it: an item the plan
// puts under gVisor never runs under runc (the job is skipped, with the reason recorded);
// an item on the node's default runtime runs under gVisor as if its eval set had said
// `isolation: {runtime_class: <hardened class>}` — re-planned, so its expectations are
// gVisor's. GPU items stay on the node default (gVisor has no GPU passthrough).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/policy/plan.h"
#include "harness/scenario/scenario.h"

namespace isoharness::runner {

// A plan item as the policy made it, shared by every job and attempt that runs it.
using PlanItemPtr = std::shared_ptr<const policy::PlanItem>;

struct Job {
  std::string scenario;  // scenario name
  PlanItemPtr item;      // the plan item that applies (never null)
  std::string runtime;   // "runc" or "gvisor" (or another class name)
  std::string node_class;
  int attempts = 1;
  std::vector<std::string> weakenings;       // selftest only: applied by RunSettings::weaken
  const nlohmann::json* eval_set = nullptr;  // the scenario's eval set (backends that submit it)
};

// A scenario with its plan, and the same scenario planned as if its eval set named the
// deployment's hardened runtime class (none when the deployment has none, or that plan
// was refused). The items are the plans' own, shared with the jobs; a plan becomes JSON
// only where the result's header is written (policy::to_json).
struct Planned {
  scenario::Scenario scenario;
  policy::Plan plan;
  std::vector<PlanItemPtr> items;         // plan.items
  std::vector<PlanItemPtr> gvisor_items;  // of the accepted gVisor plan; empty without one
};

// The plan's items, each shared.
std::vector<PlanItemPtr> share_items(const policy::Plan& plan);

// Loads and plans every scenario; all errors of all scenarios together in one UserError.
std::vector<Planned> plan_scenarios(const std::vector<std::string>& paths,
                                    const scenario::DeploymentProfile& profile, bool deny_known_risks);

// The profile's runtime classes that run the gVisor kernel.
std::vector<std::string> gvisor_runtime_classes(const scenario::DeploymentProfile& profile);

struct Skipped {
  std::string scenario, item_id, runtime, reason;
};

// Label of the runtime a plan item resolves to: "runc" for the node default, "gvisor" for
// a class whose handler is runsc, else the class name.
std::string runtime_label(const policy::PlanItem& item, const std::vector<std::string>& gvisor_classes);

// base_items: the scenario's plan items (or some of them); gvisor_items: the same scenario
// planned with the runtime class override (empty when the deployment has no hardened class).
void expand_jobs(const std::string& scenario, const std::vector<PlanItemPtr>& base_items,
                 const std::vector<PlanItemPtr>& gvisor_items, const std::vector<std::string>& runtimes,
                 const std::vector<std::string>& node_classes, int attempts,
                 const std::vector<std::string>& gvisor_classes, std::vector<Job>& jobs,
                 std::vector<Skipped>& skipped);

// expand_jobs for one planned scenario: every job it adds also carries the scenario's eval
// set, which a backend that submits configs (hawk) reduces to the job's item. The one way
// `run` and `parity` make their jobs.
void expand_planned_jobs(const Planned& planned, const std::vector<PlanItemPtr>& base_items,
                         const std::vector<std::string>& runtimes,
                         const std::vector<std::string>& node_classes, int attempts,
                         const std::vector<std::string>& gvisor_classes, std::vector<Job>& jobs,
                         std::vector<Skipped>& skipped);

}  // namespace isoharness::runner
