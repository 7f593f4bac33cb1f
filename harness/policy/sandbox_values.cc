// Rendering of one item's Kubernetes sandbox values (docs/CONTRACTS.md §1), as the
// reference's "What strict sets" shows them, and the findings that go with them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "harness/policy/chart_values.h"
#include "harness/policy/policy_internal.h"

namespace isoharness::policy {

namespace {

void add(PlanItem& item, const char* code, Severity severity, std::string message) {
  for (const auto& f : item.findings) {
    if (f.code == code && f.message == message) return;
  }
  item.findings.push_back(Finding{code, std::move(message), severity});
}

// The service's runtime class: a class the task pinned is overridden by isolation, else
// the deployment must offer it.
void check_service_runtime_class(PlanContext& ctx, const scenario::ItemFacts& facts, const ServiceRuntime& rt,
                                 PlanItem& item) {
  if (facts.runtime_class && rt.runtime_class != facts.runtime_class &&
      (rt.source == RuntimeClassSource::isolation || rt.source == RuntimeClassSource::option ||
       rt.source == RuntimeClassSource::hardened)) {
    add(item, "task_runtime_class_overridden", Severity::note,
        "the task pins runtime class '" + *facts.runtime_class + "'; isolation overrides it with '" +
            rt.runtime_class.value_or("") + "'");
  }
  if (rt.source == RuntimeClassSource::task && !ctx.deployment.offers(*rt.runtime_class)) {
    ctx.errors.push_back(ctx.scenario.scenario_source.diagnostic(
        facts.pointer.empty() ? "" : facts.pointer + "/runtime_class", item.description,
        "the task pins runtime class '" + *rt.runtime_class + "', which deployment '" + ctx.deployment.name +
            "' does not offer; name an offered class with isolation.runtime_class"));
  }
}

void check_service_gpu(const PlanContext& ctx, const scenario::ItemFacts& facts,
                       const scenario::ServiceFacts& svc, PlanItem& item) {
  if (!svc.gpu) return;
  const auto& eff = item.isolation;
  if (eff.level == Level::strict || eff.runtime_class) {
    add(item, "gpu_without_syscall_boundary", Severity::known_risk,
        "service '" + svc.name +
            "' asks for a GPU: gVisor cannot pass GPUs through, so it runs on the "
            "node's default runtime without the syscall boundary while every other control applies. "
            "Treat this as "
            "a known risk: compensate (no internet, monitoring, approvals) or use dedicated "
            "infrastructure");
  } else if (facts.runtime_class ||
             (ctx.deployment.sandbox_runtime_class && ctx.deployment.sandbox_runtime_class_is_default)) {
    add(item, "gpu_default_runtime", Severity::note,
        "service '" + svc.name + "' asks for a GPU and stays on the node's default runtime");
  }
}

// The service's network: `networkIsolated` for `none`; returns whether the task's bridge
// grants every domain (at standard, where the platform turns it into allowEntities [world]
// and allowDomains ["*"]).
bool render_network_mode(const scenario::ServiceFacts& svc, PlanItem& item, nlohmann::json& sv) {
  const auto& eff = item.isolation;
  if (svc.network_mode == "none") {
    sv["networkIsolated"] = true;
    sv.erase("networks");
  } else if (svc.network_mode == "bridge") {
    if (eff.level == Level::strict) {
      add(item, "task_network_overridden", Severity::note,
          "service '" + svc.name +
              "' pins network_mode: bridge (every domain); strict denies by default, so "
              "it gets no network" +
              (eff.allow_domains.empty() && eff.allow_cidr.empty()
                   ? std::string()
                   : std::string(" beyond the named targets")) +
              ". Name the targets it needs with allow_domains / allow_cidr");
    } else {
      add(item, "egress_everything", Severity::note,
          "service '" + svc.name +
              "' pins network_mode: bridge, which grants every domain (allowDomains [\"*\"], allowEntities "
              "[world])");
      return true;
    }
  }
  return false;
}

// Under strict, what the task's own securityContext may not keep: added capabilities and
// privileged mode (strict drops every capability and forbids escalation).
void strip_task_privileges(const scenario::ServiceFacts& svc, PlanItem& item, nlohmann::json& sc) {
  std::vector<std::string> removed;
  if (sc.contains("privileged")) {
    if (sc["privileged"] == true) removed.push_back("privileged: true");
    sc.erase("privileged");
  }
  if (sc.contains("capabilities") && sc["capabilities"].is_object() && sc["capabilities"].contains("add")) {
    removed.push_back("capabilities.add " + sc["capabilities"]["add"].dump());
    sc["capabilities"].erase("add");
  }
  if (!removed.empty())
    add(item, "task_privileges_overridden", Severity::note,
        "service '" + svc.name + "' asks for " + fmt::format("{}", fmt::join(removed, ", ")) +
            " in its own sandbox definition; strict removes it");
}

// read_only_root's scratch: emptyDir volumes at /tmp and the working directory, unless the
// task already mounts something at that path.
void add_scratch(const std::string& workdir, nlohmann::json& sv) {
  if (!sv.contains("volumes") || !sv["volumes"].is_array()) sv["volumes"] = nlohmann::json::array();
  if (!sv.contains("volumeMounts") || !sv["volumeMounts"].is_array())
    sv["volumeMounts"] = nlohmann::json::array();
  auto mounted = [&](const std::string& path) {
    for (const auto& m : sv["volumeMounts"])
      if (m.is_object() && m.value("mountPath", "") == path) return true;
    return false;
  };
  for (const auto& [name, path] : {std::pair<std::string, std::string>{"tmp", "/tmp"}, {"work", workdir}}) {
    if (mounted(path)) continue;
    sv["volumes"].push_back({{"name", name}, {"emptyDir", nlohmann::json::object()}});
    sv["volumeMounts"].push_back({{"name", name}, {"mountPath", path}});
  }
}

// The service's securityContext, volumes and mounts: the task's own, with the item's
// isolation laid over it.
void render_security_context(PlanContext& ctx, const scenario::ItemFacts& facts, const Provenance& prov,
                             const scenario::ServiceFacts& svc, PlanItem& item, nlohmann::json& sv) {
  const auto& eff = item.isolation;
  nlohmann::json sc = sv.contains("securityContext") && sv["securityContext"].is_object()
                          ? sv["securityContext"]
                          : nlohmann::json::object();
  if (eff.level == Level::strict) {
    strip_task_privileges(svc, item, sc);
    sc["allowPrivilegeEscalation"] = false;
    sc["capabilities"] = {{"drop", {"ALL"}}};
    sc["seccompProfile"] = {{"type", "RuntimeDefault"}};
  }
  if (eff.non_root) {
    sc["runAsNonRoot"] = true;
    sc["runAsUser"] = 1000;
    if (svc.image_user_root == true) {
      ctx.errors.push_back(
          ctx.scenario.at_eval_set(prov.non_root, item.description,
                                   "non_root: true on service '" + svc.name +
                                       "', whose image user is root: kubelet refuses to start "
                                       "it and every sample fails. Build the image with a "
                                       "non-root USER (and declare image_user: non-root), "
                                       "or drop non_root"));
    } else if (!svc.image_user_root.has_value()) {
      add(item, "image_user_undeclared", Severity::note,
          "non_root is on but the image user of service '" + svc.name +
              "' is not declared; kubelet refuses "
              "the pod if it is root");
    }
  }
  if (eff.read_only_root) {
    sc["readOnlyRootFilesystem"] = true;
    add_scratch(facts.workdir, sv);
  }
  if (!sc.empty())
    sv["securityContext"] = std::move(sc);
  else
    sv.erase("securityContext");
}

// The findings about the item as a whole: egress opened by name, provider tools, non_root.
void add_item_findings(const scenario::ItemFacts& facts, PlanItem& item) {
  const auto& eff = item.isolation;
  const bool strict = eff.level == Level::strict;
  if (strict && (!eff.allow_domains.empty() || !eff.allow_cidr.empty())) {
    std::string what;
    if (!eff.allow_domains.empty()) what += fmt::format("domains {}", fmt::join(eff.allow_domains, ", "));
    if (!eff.allow_cidr.empty())
      what +=
          std::string(what.empty() ? "" : "; ") + fmt::format("ranges {}", fmt::join(eff.allow_cidr, ", "));
    add(item, "egress_opened", Severity::note,
        "strict with egress opened by name: " + what + " (in-cluster addresses stay unreachable)");
  }
  if (!facts.provider_tools.empty()) {
    add(item, "provider_executed_tools", strict ? Severity::known_risk : Severity::note,
        "provider-executed tools (" + fmt::format("{}", fmt::join(facts.provider_tools, ", ")) +
            ") run on the provider's side, outside the "
            "sandbox's network rules: a form of network access" +
            std::string(strict ? "; leave them off for a high-risk eval unless it is about them" : ""));
  }
  if (eff.non_root) {
    add(item, "non_root_tools_visible", Severity::note,
        "under non_root Inspect installs its injected tools as the sandbox's own user, so the agent can read "
        "them");
  }
}

}  // namespace

namespace {

// Where the service was declared: the item's own facts entry, else sandbox_defaults.
std::string service_pointer(const PlanContext& ctx, const scenario::ItemFacts& facts,
                            const std::string& name) {
  std::string own = scenario::pointer_join(scenario::pointer_join(facts.pointer, "services"), name);
  std::string defaults = scenario::pointer_join("/sandbox_defaults/services", name);
  const auto& source = ctx.scenario.scenario_source;
  if (!facts.pointer.empty() && source.has(own)) return own;
  if (source.has(defaults)) return defaults;
  return facts.pointer;
}

// What the chart requires of a service before anything else is rendered: a name it
// accepts, and an image for every service but `default` (whose image the chart supplies).
void check_service_shape(PlanContext& ctx, const scenario::ItemFacts& facts,
                         const scenario::ServiceFacts& svc, const nlohmann::json& sv, const PlanItem& item) {
  if (!chart_service_name_ok(svc.name))
    ctx.errors.push_back(ctx.scenario.scenario_source.diagnostic(
        service_pointer(ctx, facts, svc.name), item.description,
        "service name '" + svc.name +
            "' is refused by the sandbox chart: lowercase letters, digits and '-', " +
            "starting and ending with a letter or digit, at most 63 characters"));
  if (svc.name != "default" && !sv.contains("image"))
    ctx.errors.push_back(ctx.scenario.scenario_source.diagnostic(
        service_pointer(ctx, facts, svc.name), item.description,
        "service '" + svc.name +
            "' names no image; the sandbox chart requires one for every service but "
            "`default`"));
}

// A GPU service asks for its GPU the way the platform reads it: resources.limits nvidia.com/gpu.
void render_gpu(const scenario::ServiceFacts& svc, nlohmann::json& sv) {
  if (!svc.gpu || service_gpus(sv) > 0) return;
  if (!sv.contains("resources") || !sv["resources"].is_object()) sv["resources"] = nlohmann::json::object();
  sv["resources"]["limits"][kGpuResource] = 1;
}

// One service: the task's own definition, then the item's runtime, network and security.
// Returns whether the service's bridge grants every domain.
bool render_service(PlanContext& ctx, const scenario::ItemFacts& facts, const Provenance& prov,
                    const scenario::ServiceFacts& svc, PlanItem& item, nlohmann::json& sv) {
  sv = svc.chart.is_object() ? svc.chart : nlohmann::json::object();
  if (svc.image) sv["image"] = *svc.image;
  // A service known only from facts gets what the sandbox package's compose converter gives
  // every service: a DNS record, so its siblings find it by name.
  if (!svc.chart.is_object() || svc.chart.empty()) sv["dnsRecord"] = true;
  check_service_shape(ctx, facts, svc, sv, item);
  ServiceRuntime rt = service_runtime(ctx, item.isolation, prov, facts, svc);
  sv["runtimeClassName"] = runtime_class_value(rt.runtime_class);
  if (svc.name == "default") {
    item.runtime_class = rt.runtime_class;
    item.runtime_class_source = rt.source;
  }
  if (svc.gpu) item.gpu = true;
  render_gpu(svc, sv);
  check_service_runtime_class(ctx, facts, rt, item);
  check_service_gpu(ctx, facts, svc, item);
  const bool everything = render_network_mode(svc, item, sv);
  render_security_context(ctx, facts, prov, svc, item, sv);
  return everything;
}

void append_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const auto& v : from)
    if (std::find(to.begin(), to.end(), v) == to.end()) to.push_back(v);
}

// The item's allow lists. At standard the task's own lists stand (and a bridge adds what
// the platform adds for it); above standard the item's isolation replaces them.
void render_allow_lists(const scenario::ItemFacts& facts, bool bridge, PlanItem& item,
                        nlohmann::json& values) {
  const auto& eff = item.isolation;
  std::vector<std::string> domains, cidrs, entities;
  nlohmann::json domain_ports = nlohmann::json::array();
  const bool task_lists = !facts.task_allow_domains.empty() || !facts.task_allow_cidr.empty() ||
                          !facts.task_allow_entities.empty() || !facts.task_allow_domains_ports.empty();
  if (eff.level == Level::standard) {
    domains = facts.task_allow_domains;
    cidrs = facts.task_allow_cidr;
    entities = facts.task_allow_entities;
    domain_ports = facts.task_allow_domains_ports;
  } else if (task_lists) {
    add(item, "task_allow_list_replaced", Severity::note,
        "the task's own sandbox definition opens egress (" +
            fmt::format("{}", fmt::join(facts.task_allow_domains, ", ")) +
            (facts.task_allow_entities.empty()
                 ? std::string()
                 : std::string(facts.task_allow_domains.empty() ? "" : "; ") + "entities " +
                       fmt::format("{}", fmt::join(facts.task_allow_entities, ", "))) +
            "); " + std::string(level_name(eff.level)) +
            " denies by default, so only the targets the isolation block names are open");
  }
  append_unique(domains, eff.allow_domains);
  append_unique(cidrs, eff.allow_cidr);
  if (bridge) {
    append_unique(domains, {"*"});
    append_unique(entities, {"world"});
  }
  if (!domains.empty()) values["allowDomains"] = domains;
  if (!cidrs.empty()) values["allowCIDR"] = cidrs;
  if (!entities.empty()) values["allowEntities"] = entities;
  if (!domain_ports.empty()) values["allowDomainsPorts"] = domain_ports;
}

}  // namespace

void render_item(PlanContext& ctx, const scenario::ItemFacts& facts, const Provenance& prov, PlanItem& item) {
  nlohmann::json services = nlohmann::json::object();
  bool bridge = false;
  for (const auto& svc : facts.services) {
    nlohmann::json sv;
    if (render_service(ctx, facts, prov, svc, item, sv)) bridge = true;
    services[svc.name] = std::move(sv);
  }
  nlohmann::json values = nlohmann::json::object();
  values["services"] = std::move(services);
  // The task's named volumes, which its services mount by name ("name:/path").
  if (facts.task_volumes.is_object() && !facts.task_volumes.empty()) values["volumes"] = facts.task_volumes;
  render_allow_lists(facts, bridge, item, values);
  item.values = ctx.interner.intern(std::move(values));
  add_item_findings(facts, item);
}

}  // namespace isoharness::policy
