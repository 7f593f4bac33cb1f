// plan_scenario: every item of the eval set through resolve -> render -> expect, all
// errors of the config collected together.
#include <cstdint>
#include <map>

#include "harness/common/fnv1a.h"
#include "harness/policy/policy_internal.h"

namespace isoharness::policy {

using scenario::pointer_join;

std::size_t Plan::known_risk_count() const {
  std::size_t n = 0;
  for (const auto& item : items) {
    for (const auto& f : item.findings) n += f.severity == Severity::known_risk ? 1 : 0;
  }
  return n;
}

namespace {

std::string id_part(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.size() > 48) out.resize(48);
  return out.empty() ? "_" : out;
}

}  // namespace

std::string item_id(const nlohmann::json& eval_set, std::size_t t, std::size_t i) {
  const auto& task = eval_set["tasks"][t];
  const auto& item = task["items"][i];
  // Keys of JSON objects are sorted, so the dump is canonical.
  nlohmann::json key = {{"package", task.value("package", nlohmann::json())},
                        {"args", item.value("args", nlohmann::json())},
                        {"sample_ids", item.value("sample_ids", nlohmann::json())}};
  char hash[9];
  std::snprintf(hash, sizeof hash, "%08x", static_cast<unsigned>(fnv1a(key.dump()) & 0xffffffffu));
  return id_part(task.value("name", std::string("task"))) + "/" + std::to_string(i) + "-" +
         id_part(item.value("name", std::string("item"))) + "-" + hash;
}

namespace {

// The plan's header: what it was made from.
Plan plan_header(const scenario::Scenario& s, const scenario::DeploymentProfile& d,
                 const PlanOptions& options) {
  Plan plan;
  plan.scenario_name = s.name;
  plan.scenario_path = s.path;
  plan.bare_eval_set = s.bare_eval_set;
  plan.matrix = s.matrix;
  plan.workloads = s.workloads;
  plan.tolerance = s.tolerance;
  plan.deployment_name = d.name;
  plan.deployment_path = d.path;
  plan.deployment_runtime_classes = d.runtime_classes;
  plan.deployment_sandbox_runtime_class = d.sandbox_runtime_class;
  plan.runtime_class_override = options.runtime_class_override;
  plan.deny_known_risks = options.deny_known_risks;
  return plan;
}

// Matrix runtimes: the node default (runc) or a class the deployment offers; node classes
// the deployment declares.
void check_matrix(const scenario::Scenario& s, const scenario::DeploymentProfile& d, Plan& plan) {
  if (s.bare_eval_set) return;
  for (std::size_t k = 0; k < s.matrix.runtimes.size(); ++k) {
    const auto& r = s.matrix.runtimes[k];
    if (r != "runc" && !d.offers(r)) {
      plan.errors.push_back(s.scenario_source.diagnostic(
          pointer_join("/matrix/runtimes", k), "matrix",
          "runtime '" + r + "' is neither runc (the node default) nor a class deployment '" + d.name +
              "' offers"));
    }
  }
  for (std::size_t k = 0; k < s.matrix.node_classes.size(); ++k) {
    const auto& n = s.matrix.node_classes[k];
    if (!d.node_classes.empty() &&
        std::find(d.node_classes.begin(), d.node_classes.end(), n) == d.node_classes.end()) {
      plan.errors.push_back(
          s.scenario_source.diagnostic(pointer_join("/matrix/node_classes", k), "matrix",
                                       "node class '" + n + "' is not in deployment '" + d.name + "'"));
    }
  }
}

// Who the item is: names from the eval set, where it sits, and an id unique in the plan.
PlanItem identify_item(const scenario::Scenario& s, std::size_t t, std::size_t i,
                       std::map<std::string, std::size_t>& ids) {
  const auto& task = s.eval_set["tasks"][t];
  const auto& it = task["items"][i];
  PlanItem item;
  item.task = task.value("name", std::string());
  item.item = it.value("name", std::string());
  item.package = task.value("package", std::string());
  item.task_index = t;
  item.item_index = i;
  item.args = it.value("args", nlohmann::json());
  item.sample_ids = it.value("sample_ids", nlohmann::json());
  item.description = scenario::describe_item(s.eval_set, t, i);
  item.where =
      s.at_eval_set("/tasks/" + std::to_string(t) + "/items/" + std::to_string(i), item.description, "");
  item.id = item_id(s.eval_set, t, i);
  if (auto n = ++ids[item.id]; n > 1) item.id += "~" + std::to_string(n);
  return item;
}

// --deny-known-risks: every known risk of the item is an error.
void refuse_known_risks(const PlanItem& item, Plan& plan) {
  for (const auto& f : item.findings) {
    if (f.severity != Severity::known_risk) continue;
    Diagnostic d2 = item.where;
    d2.message = "known risk refused by --deny-known-risks: " + f.code + ": " + f.message;
    plan.errors.push_back(std::move(d2));
  }
}

}  // namespace

Plan plan_scenario(const scenario::Scenario& s, const scenario::DeploymentProfile& d,
                   const PlanOptions& options) {
  Plan plan = plan_header(s, d, options);
  PlanContext ctx{s, d, options, {}, plan.errors, {}};
  if (s.eval_set.contains("isolation")) {
    ctx.eval_set_block = parse_isolation_block(
        s.eval_set["isolation"], "/isolation", [&](const std::string& p, std::string m) {
          plan.errors.push_back(s.at_eval_set(p, "eval set isolation", std::move(m)));
        });
  }
  check_matrix(s, d, plan);

  std::map<std::string, std::size_t> ids;
  // Ways out follow from the values alone, and equal values are one interned document.
  std::map<const nlohmann::json*, std::shared_ptr<const EgressExpectations>> ways;
  const auto& tasks = s.eval_set["tasks"];
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    for (std::size_t i = 0; i < tasks[t]["items"].size(); ++i) {
      const auto& facts = s.facts.at(t).at(i);
      PlanItem item = identify_item(s, t, i, ids);
      Provenance prov;
      if (!resolve_isolation(ctx, t, i, item.description, item.isolation, prov)) continue;
      item.level = item.isolation.level;
      render_item(ctx, facts, prov, item);
      check_task_brought(ctx, facts, item);
      auto& shared = ways[&item.values.get()];
      if (!shared) shared = std::make_shared<const EgressExpectations>(egress_ways(item.values.get()));
      item.egress = shared;
      item.expect = ctx.interner.intern(expectations(ctx, facts, item));
      if (options.deny_known_risks) refuse_known_risks(item, plan);
      plan.items.push_back(std::move(item));
    }
  }
  return plan;
}

}  // namespace isoharness::policy
