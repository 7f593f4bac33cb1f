// Rendering of one item's Kubernetes sandbox values (docs/CONTRACTS.md §1), as the
// reference's "What strict sets" shows them, and the findings that go with them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

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
      (rt.source == "isolation" || rt.source == "option" || rt.source == "hardened")) {
    add(item, "task_runtime_class_overridden", Severity::note,
        "the task pins runtime class '" + *facts.runtime_class + "'; isolation overrides it with '" +
            rt.runtime_class.value_or("") + "'");
  }
  if (rt.source == "task" && !ctx.deployment.offers(*rt.runtime_class)) {
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

// The service's networkMode; returns whether it grants every domain.
bool render_network_mode(const scenario::ServiceFacts& svc, PlanItem& item, nlohmann::json& sv) {
  const auto& eff = item.isolation;
  if (svc.network_mode == "none") {
    sv["networkMode"] = "none";
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
      sv["networkMode"] = "bridge";
      add(item, "egress_everything", Severity::note,
          "service '" + svc.name + "' pins network_mode: bridge, which grants every domain (*)");
      return true;
    }
  }
  return false;
}

// The service's securityContext, volumes and mounts.
void render_security_context(PlanContext& ctx, const scenario::ItemFacts& facts, const Provenance& prov,
                             const scenario::ServiceFacts& svc, PlanItem& item, nlohmann::json& sv) {
  const auto& eff = item.isolation;
  nlohmann::json sc = nlohmann::json::object();
  if (eff.level == Level::strict) {
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
    sv["volumes"] = {{{"name", "tmp"}, {"emptyDir", nlohmann::json::object()}},
                     {{"name", "work"}, {"emptyDir", nlohmann::json::object()}}};
    sv["volumeMounts"] = {{{"name", "tmp"}, {"mountPath", "/tmp"}},
                          {{"name", "work"}, {"mountPath", facts.workdir}}};
  }
  if (!sc.empty()) sv["securityContext"] = std::move(sc);
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

void render_item(PlanContext& ctx, const scenario::ItemFacts& facts, const Provenance& prov, PlanItem& item) {
  const auto& eff = item.isolation;
  nlohmann::json services = nlohmann::json::object();
  bool grants_everything = false;
  for (const auto& svc : facts.services) {
    ServiceRuntime rt = service_runtime(ctx, eff, prov, facts, svc);
    nlohmann::json sv = nlohmann::json::object();
    if (svc.image) sv["image"] = *svc.image;
    if (rt.runtime_class) sv["runtimeClassName"] = *rt.runtime_class;
    sv["gpu"] = svc.gpu;
    if (svc.name == "default") {
      item.runtime_class = rt.runtime_class;
      item.runtime_class_source = rt.source;
    }
    if (svc.gpu) item.gpu = true;
    check_service_runtime_class(ctx, facts, rt, item);
    check_service_gpu(ctx, facts, svc, item);
    if (render_network_mode(svc, item, sv)) grants_everything = true;
    render_security_context(ctx, facts, prov, svc, item, sv);
    services[svc.name] = std::move(sv);
  }

  nlohmann::json values = nlohmann::json::object();
  values["services"] = std::move(services);
  std::vector<std::string> domains = eff.allow_domains;
  if (grants_everything && std::find(domains.begin(), domains.end(), "*") == domains.end())
    domains.push_back("*");
  if (!domains.empty()) values["allowDomains"] = domains;
  if (!eff.allow_cidr.empty()) values["allowCIDR"] = eff.allow_cidr;
  item.values = ctx.interner.intern(std::move(values));
  add_item_findings(facts, item);
}

}  // namespace isoharness::policy
