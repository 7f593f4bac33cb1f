// The Kubernetes API's view of a sandbox judged against the plan (docs/CONTRACTS.md §4.9):
// the pod spec each planned service was admitted with, compared with the item's rendered
// values, field by field. The API is an outside source: a sandbox that controls its own
// isoprobe cannot change what the cluster admitted. So the runtime the pod was given
// decides `kernel` together with the sandbox's report: a pod that does not name the planned
// runtime class (absent, `CLUSTER_DEFAULT`, another class, or a class whose handler is not
// the planned runtime) fails `kernel`, whatever kernel the sandbox reports.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/deploy/kube_objects.h"
#include "harness/verify/verify.h"

namespace isoharness::verify {

struct KubernetesApiInput {
  const nlohmann::json& values;  // the item's rendered sandbox values (docs/CONTRACTS.md §1)
  const deploy::KubernetesApiView& view;
  // The runtime handler each runtime class must run (the profile's runtime_handlers, else
  // the class name itself); empty: handlers are not compared.
  std::map<std::string, std::string> class_handlers;
};

// The API-view checks, in a stable order: api:runtime_class, api:security_context,
// api:host_namespaces, api:host_paths, api:service_account_token, api:devices. A view that
// is absent or waived gives one n/a check `kubernetes_api` saying so; an unreadable view,
// or one without a pod for a planned service, makes the checks it cannot judge
// `unwitnessed`. Never throws.
std::vector<CheckResult> check_kubernetes_api(const KubernetesApiInput& input);

// Lays the API's verdict over the sandbox's own checks: `kernel` fails when
// api:runtime_class fails (both sides named), and is `unwitnessed` when it would pass and
// api:runtime_class is.
void apply_kubernetes_api(std::vector<CheckResult>& claims, const std::vector<CheckResult>& api_checks);

}  // namespace isoharness::verify
