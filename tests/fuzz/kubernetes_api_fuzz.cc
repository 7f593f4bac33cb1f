// The Kubernetes API's JSON (harness/deploy/kube_objects.h): the same bytes read as a List
// of Pods, as RuntimeClass objects and as CiliumNetworkPolicy objects, and the pods judged
// against a strict item's values (harness/verify/kubernetes_api.h). Invariants checked:
// every list stays within its bound, and a view judged on no pod for the planned service
// passes nothing.
#include <cstdlib>

#include "harness/deploy/kube_objects.h"
#include "harness/verify/kubernetes_api.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace isoharness;
  const deploy::KubeReadLimits limits{.max_bytes = 1 << 16, .max_items = 16, .max_string = 256};
  const std::string_view text = fuzz::as_text(data, size);
  static const nlohmann::json values = nlohmann::json::parse(R"({"services": {"default": {
      "runtimeClassName": "gvisor",
      "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]},
                          "seccompProfile": {"type": "RuntimeDefault"}}}}})");
  deploy::KubernetesApiView view;
  view.state = deploy::KubernetesApiView::State::read;
  if (auto pods = deploy::read_pod_list(text, limits)) {
    if (pods->pods.size() > 16) std::abort();
    for (const auto& p : pods->pods)
      if (p.containers.size() > 32 || p.volumes.size() > 16 || p.name.size() > 256) std::abort();
    view.pods = pods->pods;
  }
  if (auto classes = deploy::read_runtime_classes(text, limits)) {
    if (classes->size() > 16) std::abort();
    view.runtime_classes = *classes;
    view.runtime_classes_read = true;
  }
  if (auto policies = deploy::read_cilium_policies(text, limits))
    if (policies->size() > 16) std::abort();
  bool seen = false;
  for (const auto& p : view.pods) seen = seen || p.container("default");
  for (const auto& c : verify::check_kubernetes_api({values, view, {{"gvisor", "runsc"}}}))
    if (!seen && c.status == isoharness::CheckStatus::pass) std::abort();
  return 0;
}
