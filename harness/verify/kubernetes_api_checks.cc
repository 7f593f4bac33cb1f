// The pod spec as the cluster admitted it, against the plan's values (kubernetes_api.h).
// Each family collects one line per disagreement, naming the service, what the plan sets
// and what the API shows.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>

#include "harness/common/json_read.h"
#include "harness/policy/chart_values.h"
#include "harness/verify/checks_internal.h"
#include "harness/verify/kubernetes_api.h"

namespace isoharness::verify {
namespace {

using deploy::KubeContainer;
using deploy::KubePod;
using deploy::KubernetesApiView;
using nlohmann::json;

// One planned service and the pod and container the API shows it in (nullptr: none).
struct ServicePod {
  std::string service;
  const json* values = nullptr;
  const KubePod* pod = nullptr;
  const KubeContainer* container = nullptr;
};

std::vector<ServicePod> service_pods(const json& values, const KubernetesApiView& view) {
  std::vector<ServicePod> out;
  const json* services = common::json_object(values, "services");
  if (!services) return out;
  for (const auto& [name, sv] : services->items()) {
    ServicePod sp{name, &sv};
    for (const auto& pod : view.pods)
      if (const auto* c = pod.container(name)) {
        sp.pod = &pod;
        sp.container = c;
        break;
      }
    out.push_back(sp);
  }
  return out;
}

std::string shown(const std::optional<bool>& b) {
  return b ? (*b ? "true" : "false") : "absent";
}

std::string shown(const std::optional<std::string>& s) {
  return s ? "'" + *s + "'" : "absent";
}

// The source line of every check's evidence.
std::string evidence_of(const KubernetesApiView& view, const std::vector<ServicePod>& pods) {
  std::string e = "kubernetes api: " + view.source;
  for (const auto& sp : pods)
    if (sp.pod) e += fmt::format("; service {}: pod {}/{}", sp.service, sp.pod->namespace_, sp.pod->name);
  for (const auto& p : view.problems) e += "; " + p;
  return detail::bounded(e);
}

using Family = std::function<void(const ServicePod&, std::vector<std::string>&)>;

// One check over every planned service: pass with no disagreement, fail naming each, and
// unwitnessed when a planned service has no pod in the API's list.
CheckResult judge_family(const std::string& control, const std::string& expected,
                         const std::vector<ServicePod>& pods, const std::string& evidence,
                         const Family& family) {
  std::vector<std::string> wrong, unseen;
  for (const auto& sp : pods) {
    if (!sp.pod) {
      unseen.push_back(sp.service);
      continue;
    }
    family(sp, wrong);
  }
  CheckResult r;
  r.control = control;
  r.expected = expected;
  r.evidence = evidence;
  if (!wrong.empty()) {
    r.status = CheckStatus::fail;
    r.observed = detail::bounded(fmt::format("{}", fmt::join(wrong, "; ")));
    r.reason = control + ": the Kubernetes API shows the pod spec differing from the plan: " + r.observed;
  } else if (!unseen.empty()) {
    r.status = CheckStatus::unwitnessed;
    r.observed = fmt::format("no pod in the API's list for service {}", fmt::join(unseen, ", "));
    r.reason = control + ": " + r.observed + "; the admitted spec cannot be compared";
  } else {
    r.status = CheckStatus::pass;
    r.observed = "as planned";
    r.reason = control + ": the admitted pod spec agrees with the plan";
  }
  return r;
}

// runtimeClassName: the planned class, and (when the RuntimeClass objects were read) its
// handler the planned runtime.
void runtime_class_family(const KubernetesApiInput& in, const ServicePod& sp,
                          std::vector<std::string>& wrong) {
  const std::optional<std::string> planned = policy::effective_runtime_class(*sp.values);
  const auto& got = sp.pod->runtime_class_name;
  const std::string got_text =
      got ? "runtimeClassName '" + *got + "'" : "no runtimeClassName (the node's default)";
  if (!planned) {
    if (got)
      wrong.push_back("service " + sp.service + ": the plan leaves it on the node's default; the API shows " +
                      got_text);
    return;
  }
  if (!got || *got != *planned || *got == policy::kClusterDefault) {
    wrong.push_back("service " + sp.service + ": the plan sets runtimeClassName '" + *planned +
                    "'; the API shows " + got_text);
    return;
  }
  if (!in.view.runtime_classes_read) return;
  const auto want = in.class_handlers.find(*planned);
  const auto it = std::find_if(in.view.runtime_classes.begin(), in.view.runtime_classes.end(),
                               [&](const auto& rc) { return rc.name == *planned; });
  if (it == in.view.runtime_classes.end())
    wrong.push_back("service " + sp.service + ": the API shows no RuntimeClass '" + *planned + "'");
  else if (want != in.class_handlers.end() && it->handler != want->second)
    wrong.push_back("service " + sp.service + ": RuntimeClass '" + *planned + "' should run handler '" +
                    want->second + "'; the API shows handler '" + it->handler + "'");
}

// A boolean the plan sets true (or false) that the container must show the same way.
void same_bool(const ServicePod& sp, const json& planned, const char* key, const std::optional<bool>& got,
               std::vector<std::string>& wrong) {
  const auto want = common::json_bool(planned, key);
  if (want && got != want)
    wrong.push_back(fmt::format("service {}: the plan sets {} {}; the API shows {}", sp.service, key,
                                *want ? "true" : "false", shown(got)));
}

void capability_lines(const ServicePod& sp, const json& planned, std::vector<std::string>& wrong) {
  const auto& sc = sp.container->security;
  const json* caps = common::json_object(planned, "capabilities");
  const auto planned_drop = caps ? common::json_strings(*caps, "drop") : std::vector<std::string>{};
  const auto planned_add = caps ? common::json_strings(*caps, "add") : std::vector<std::string>{};
  const auto drop = sc.capabilities_drop.value_or(std::vector<std::string>{});
  const auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  if (has(planned_drop, "ALL") && !has(drop, "ALL"))
    wrong.push_back(fmt::format("service {}: the plan drops ALL capabilities; the API shows drop [{}]",
                                sp.service, fmt::join(drop, ", ")));
  for (const auto& a : sc.capabilities_add.value_or(std::vector<std::string>{}))
    if (!has(planned_add, a))
      wrong.push_back("service " + sp.service + ": the API shows capability " + a +
                      " added, which the plan does not add");
}

void security_family(const ServicePod& sp, std::vector<std::string>& wrong) {
  const json* planned_ptr = common::json_object(*sp.values, "securityContext");
  const json planned = planned_ptr ? *planned_ptr : json::object();
  const auto& c = sp.container->security;
  const auto& p = sp.pod->pod_security;
  if (c.privileged == true && common::json_bool(planned, "privileged") != true)
    wrong.push_back("service " + sp.service + ": the API shows privileged true, which the plan does not set");
  same_bool(sp, planned, "allowPrivilegeEscalation", c.allow_privilege_escalation, wrong);
  same_bool(sp, planned, "readOnlyRootFilesystem", c.read_only_root_filesystem, wrong);
  same_bool(sp, planned, "runAsNonRoot", c.run_as_non_root ? c.run_as_non_root : p.run_as_non_root, wrong);
  const auto user = c.run_as_user ? c.run_as_user : p.run_as_user;
  if (const auto want = common::json_int(planned, "runAsUser"); want && user != want)
    wrong.push_back(fmt::format("service {}: the plan sets runAsUser {}; the API shows {}", sp.service, *want,
                                user ? std::to_string(*user) : "absent"));
  const auto seccomp = c.seccomp_type ? c.seccomp_type : p.seccomp_type;
  const json* sp_planned = common::json_object(planned, "seccompProfile");
  if (const auto want = sp_planned ? common::json_string(*sp_planned, "type") : std::nullopt;
      want && seccomp != want && !(*want == "RuntimeDefault" && seccomp == "Localhost"))
    wrong.push_back("service " + sp.service + ": the plan sets seccompProfile " + *want + "; the API shows " +
                    shown(seccomp));
  if (seccomp == "Unconfined" && !sp_planned)
    wrong.push_back("service " + sp.service + ": the API shows seccompProfile Unconfined");
  capability_lines(sp, planned, wrong);
}

void host_namespace_family(const ServicePod& sp, std::vector<std::string>& wrong) {
  for (const auto& [key, value] :
       {std::pair{"hostPID", sp.pod->host_pid}, std::pair{"hostNetwork", sp.pod->host_network},
        std::pair{"hostIPC", sp.pod->host_ipc}})
    if (value == true) wrong.push_back("service " + sp.service + ": the API shows " + key + " true");
}

// The planned hostPath of a service's volume by name ("" when the plan names none).
std::string planned_host_path(const json& values, const std::string& name) {
  for (const json& v : common::json_array(values, "volumes") ? values["volumes"] : json::array())
    if (common::json_string(v, "name") == name)
      if (const json* hp = common::json_object(v, "hostPath")) return common::json_string_or(*hp, "path", "");
  return "";
}

void host_path_family(const ServicePod& sp, std::vector<std::string>& wrong) {
  for (const auto& m : sp.container->volume_mounts) {
    const auto* v = sp.pod->volume(m);
    if (!v || !v->host_path) continue;
    if (planned_host_path(*sp.values, m) != *v->host_path)
      wrong.push_back("service " + sp.service + ": the API shows host path " + *v->host_path +
                      " mounted (volume " + m + "), which the plan does not mount");
  }
}

void token_family(const ServicePod& sp, std::vector<std::string>& wrong) {
  if (sp.pod->automount_service_account_token == true)
    wrong.push_back("service " + sp.service + ": the API shows automountServiceAccountToken true");
  for (const auto& m : sp.container->volume_mounts)
    if (const auto* v = sp.pod->volume(m); v && v->service_account_token)
      wrong.push_back("service " + sp.service +
                      ": the API shows a service-account token mounted (projected volume " + m + ")");
}

void device_family(const ServicePod& sp, std::vector<std::string>& wrong) {
  const long long planned = policy::service_gpus(*sp.values);
  const long long got = sp.container->gpus.value_or(0);
  if (got > planned)
    wrong.push_back(fmt::format("service {}: the plan asks for {} nvidia.com/gpu; the API shows {}",
                                sp.service, planned, got));
  for (const auto& d : sp.container->volume_devices)
    wrong.push_back("service " + sp.service + ": the API shows device " + d + " (volumeDevices)");
}

const std::vector<std::pair<std::string, std::string>>& families() {
  static const std::vector<std::pair<std::string, std::string>> f{
      {"api:runtime_class", "every planned service's pod names its planned runtime class (and its handler)"},
      {"api:security_context", "each container's securityContext as the plan sets it"},
      {"api:host_namespaces", "no hostPID, hostNetwork or hostIPC"},
      {"api:host_paths", "no hostPath volume the plan does not mount"},
      {"api:service_account_token", "no service-account token mounted, automount not true"},
      {"api:devices", "no GPU beyond the plan's, no volumeDevices"}};
  return f;
}

std::vector<CheckResult> without_view(const KubernetesApiView& view) {
  if (view.state == KubernetesApiView::State::absent || view.state == KubernetesApiView::State::waived) {
    const bool waived = view.state == KubernetesApiView::State::waived;
    return {detail::not_applicable(
        "kubernetes_api",
        waived
            ? "kubernetes_api: none (the deployment declares kubernetes_api: none): the pod spec as admitted "
              "is "
              "not compared"
            : "kubernetes_api: absent (the deployment profile names no kubernetes_api: source): the pod spec "
              "as admitted is not compared, the runtime rests on the sandbox's report",
        waived ? "none" : "absent")};
  }
  std::vector<CheckResult> out;
  for (const auto& [control, expected] : families())
    out.push_back({control, CheckStatus::unwitnessed, expected, "unreadable",
                   control + ": the Kubernetes API's view could not be read: " + view.note,
                   detail::bounded("kubernetes api: " + view.source)});
  return out;
}

}  // namespace

std::vector<CheckResult> check_kubernetes_api(const KubernetesApiInput& in) {
  if (in.view.state != KubernetesApiView::State::read) return without_view(in.view);
  const auto pods = service_pods(in.values, in.view);
  const std::string evidence = evidence_of(in.view, pods);
  const auto& f = families();
  std::vector<CheckResult> out;
  out.push_back(judge_family(f[0].first, f[0].second, pods, evidence,
                             [&](const ServicePod& sp, auto& w) { runtime_class_family(in, sp, w); }));
  out.push_back(judge_family(f[1].first, f[1].second, pods, evidence, security_family));
  out.push_back(judge_family(f[2].first, f[2].second, pods, evidence, host_namespace_family));
  out.push_back(judge_family(f[3].first, f[3].second, pods, evidence, host_path_family));
  out.push_back(judge_family(f[4].first, f[4].second, pods, evidence, token_family));
  out.push_back(judge_family(f[5].first, f[5].second, pods, evidence, device_family));
  return out;
}

void apply_kubernetes_api(std::vector<CheckResult>& claims, const std::vector<CheckResult>& api_checks) {
  const auto api = std::find_if(api_checks.begin(), api_checks.end(),
                                [](const CheckResult& c) { return c.control == "api:runtime_class"; });
  if (api == api_checks.end()) return;
  for (auto& c : claims) {
    if (c.control != "kernel") continue;
    if (api->status == CheckStatus::fail) {
      c.reason = "kernel: the sandbox reports " + (c.observed.empty() ? std::string("nothing") : c.observed) +
                 "; the Kubernetes API shows " + api->observed;
      c.status = CheckStatus::fail;
      c.evidence = detail::bounded(c.evidence + "\n" + api->evidence);
    } else if (api->status == CheckStatus::unwitnessed && c.status == CheckStatus::pass) {
      c.status = CheckStatus::unwitnessed;
      c.reason = "kernel: the sandbox reports " + c.observed + "; " + api->reason;
    }
  }
}

}  // namespace isoharness::verify
