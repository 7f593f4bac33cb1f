// The expect keys of the escape classes (docs/SECURITY.md, "Escape classes"; CONTRACTS §2):
// which host-backed mounts a sandbox may show, and the states of /proc/sys, the cgroup
// mounts and bpf(2) each kernel may show. "emulated" is the open state seen under an
// observed gVisor: its /proc/sys, cgroupfs and bpf are the sentry's own and never reach
// the host kernel.
#include "harness/policy/policy_internal.h"

namespace isoharness::policy {

namespace {

// Mounts of the node's storage every container has, put there by the runtime itself
// (the kubelet's pod files), and those the deployment's sandboxes show by design (its
// profile's node_mounts: by default the local backend's read-only host /usr and
// /etc/alternatives, as its image is this machine's OS).
std::vector<std::string> runtime_plumbing(const scenario::DeploymentProfile& deployment) {
  std::vector<std::string> out = {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/dev/termination-log",
                                  // a service-account token: judged by kubernetes_credentials,
                                  // whatever filesystem the runtime serves it from
                                  "/run/secrets/kubernetes.io/serviceaccount",
                                  "/var/run/secrets/kubernetes.io/serviceaccount"};
  out.insert(out.end(), deployment.node_mounts.begin(), deployment.node_mounts.end());
  return out;
}

// The agent service's own hostPath mounts, which the task asks for. Never under strict.
void add_task_host_paths(const PlanItem& item, std::vector<std::string>& out) {
  const nlohmann::json& values = item.values.get();
  if (!values.is_object() || !values.contains("services") || !values["services"].is_object() ||
      !values["services"].contains("default"))
    return;
  const auto& svc = values["services"]["default"];
  if (!svc.is_object() || !svc.contains("volumes") || !svc.contains("volumeMounts") ||
      !svc["volumes"].is_array() || !svc["volumeMounts"].is_array())
    return;
  for (const auto& v : svc["volumes"]) {
    if (!v.is_object() || !v.contains("hostPath") || !v.contains("name")) continue;
    for (const auto& m : svc["volumeMounts"])
      if (m.is_object() && m.contains("name") && m["name"] == v["name"] && m.contains("mountPath") &&
          m["mountPath"].is_string())
        out.push_back(m["mountPath"].get<std::string>());
  }
}

}  // namespace

void add_escape_expectations(const PlanContext& ctx, const PlanItem& item, bool gvisor, nlohmann::json& e) {
  std::vector<std::string> allowed = runtime_plumbing(ctx.deployment);
  if (item.isolation.level != Level::strict) add_task_host_paths(item, allowed);
  e["host_mounts_allowed"] = allowed;
  const nlohmann::json closed_only =
      gvisor ? nlohmann::json{"read_only", "emulated"} : nlohmann::json{"read_only"};
  e["proc_sys"] = closed_only;
  e["cgroup_mounts"] = closed_only;
  e["bpf"] = gvisor ? nlohmann::json{"refused", "emulated"} : nlohmann::json{"refused"};
}

}  // namespace isoharness::policy
