// What a task brings with its sandbox that the platform passes through as written
// (docs/CONTRACTS.md §8, "What tasks bring"): a local sandbox, references the runner fills
// from its own environment, extra Kubernetes objects, entities beyond world, added
// capabilities. Under strict each is refused at its place in the task's file, all at once;
// at standard each is a known risk naming that place. Environment references are a known
// risk at every level: the file is valid, but what the sandbox receives is the runner's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/policy/policy_internal.h"

namespace isoharness::policy {

namespace {

using scenario::BroughtKind;

struct BroughtRule {
  const char* code;        // the finding at standard
  const char* what;        // for people, with the item named after it
  const char* strict_fix;  // what to do instead under strict
};

BroughtRule brought_rule(BroughtKind kind) {
  switch (kind) {
    case BroughtKind::additional_resources:
      return {"task_additional_resources",
              "deploys extra Kubernetes objects with the sandbox (network policies among them can open any "
              "way out)",
              "remove additionalResources from the task's values file"};
    case BroughtKind::entity:
      return {"task_entity",
              "opens egress to a Cilium entity other than world (the cluster, its nodes or API)",
              "remove it from allowEntities; name targets with isolation allow_domains / allow_cidr"};
    case BroughtKind::capability:
      return {"task_capabilities", "adds privileges to a service's security context",
              "remove capabilities.add and privileged from the task's values file"};
    case BroughtKind::environment_reference:
      break;
  }
  return {"compose_environment_reference", "", ""};
}

std::string place(const Diagnostic& d) {
  Diagnostic where = d;
  where.item.clear();
  where.message.clear();
  std::string s = where.to_string();
  while (!s.empty() && (s.back() == ':' || s.back() == ' ')) s.pop_back();
  return s;
}

void add_known_risk(PlanItem& item, const char* code, std::string message) {
  for (const auto& f : item.findings)
    if (f.code == code && f.message == message) return;
  item.findings.push_back(Finding{code, std::move(message), Severity::known_risk});
}

void check_local_sandbox(PlanContext& ctx, const scenario::ItemFacts& facts, PlanItem& item) {
  if (!facts.local_sandbox) return;
  const std::string what =
      "sandbox: local runs the task's tools in the runner's own pod: internet, the cluster's API and no "
      "chart "
      "isolation at all";
  if (item.level == Level::strict) {
    Diagnostic d = *facts.local_sandbox;
    d.item = item.description;
    d.message = what + "; strict refuses it: give the task a k8s or docker sandbox";
    ctx.errors.push_back(std::move(d));
  } else {
    add_known_risk(item, "local_sandbox", place(*facts.local_sandbox) + ": the item has no sandbox: " + what);
  }
}

void check_environment_references(const scenario::ItemFacts& facts, PlanItem& item) {
  std::vector<std::string> names;
  std::string first;
  for (const auto& b : facts.task_brought) {
    if (b.kind != BroughtKind::environment_reference) continue;
    if (first.empty()) first = place(b.where);
    if (std::find(names.begin(), names.end(), b.what) == names.end()) names.push_back(b.what);
  }
  if (names.empty()) return;
  add_known_risk(
      item, "compose_environment_reference",
      fmt::format("{}: the compose file refers to {} ({}); the platform's runner fills them from its "
                  "own environment (envsubst) before converting the file, so the sandbox gets the "
                  "runner's values",
                  first, names.size() == 1 ? "a variable" : "variables", fmt::join(names, ", ")));
}

// Inspect runs the agent in the service named default (the sandbox package puts it first,
// and Inspect takes the first); when the task's file names none, that is the chart's own.
void note_chart_default(const scenario::ItemFacts& facts, PlanItem& item) {
  if (facts.services.empty() || !facts.services[0].from_chart_values) return;
  std::string others;
  for (std::size_t i = 1; i < facts.services.size(); ++i)
    others += (i > 1 ? "', '" : "'") + facts.services[i].name;
  item.findings.push_back(Finding{"chart_default_service",
                                  "the task's " + facts.sandbox_kind + " file " + facts.sandbox_file +
                                      " names no service default, so Helm merges in the chart's own (" +
                                      scenario::kChartDefaultImage +
                                      ", tail -f /dev/null) and Inspect runs the agent there, not in " +
                                      others + "'; the expectations are that service's",
                                  Severity::note});
}

}  // namespace

void check_task_brought(PlanContext& ctx, const scenario::ItemFacts& facts, PlanItem& item) {
  check_local_sandbox(ctx, facts, item);
  note_chart_default(facts, item);
  check_environment_references(facts, item);
  for (const auto& b : facts.task_brought) {
    if (b.kind == BroughtKind::environment_reference) continue;
    const BroughtRule rule = brought_rule(b.kind);
    if (item.level == Level::strict) {
      Diagnostic d = b.where;
      d.item = item.description;
      d.message = b.where.message + ": the task " + rule.what +
                  "; the platform passes it through as written " +
                  "and strict refuses it: " + rule.strict_fix;
      ctx.errors.push_back(std::move(d));
    } else {
      add_known_risk(item, rule.code,
                     place(b.where) + ": " + b.where.message + ": the task " + rule.what +
                         "; the platform passes it through as written");
    }
  }
}

}  // namespace isoharness::policy
