#include "harness/runner/matrix.h"

#include <algorithm>

#include "harness/common/error.h"
#include "harness/policy/plan.h"

namespace isoharness::runner {

std::vector<Planned> plan_scenarios(const std::vector<std::string>& paths,
                                    const scenario::DeploymentProfile& profile, bool deny_known_risks) {
  std::vector<Diagnostic> errors;
  std::vector<Planned> planned;
  for (const auto& path : paths) {
    Planned p{scenario::load_scenario(path), {}, {}, {}};
    p.plan = policy::plan_scenario(p.scenario, profile, {deny_known_risks, std::nullopt});
    errors.insert(errors.end(), p.plan.errors.begin(), p.plan.errors.end());
    p.items = share_items(p.plan);
    if (profile.sandbox_runtime_class) {
      policy::Plan g =
          policy::plan_scenario(p.scenario, profile, {deny_known_risks, profile.sandbox_runtime_class});
      if (g.accepted()) p.gvisor_items = share_items(g);
    }
    planned.push_back(std::move(p));
  }
  if (!errors.empty()) throw UserError(std::move(errors));
  return planned;
}

std::vector<PlanItemPtr> share_items(const policy::Plan& plan) {
  std::vector<PlanItemPtr> out;
  out.reserve(plan.items.size());
  for (const auto& item : plan.items) out.push_back(std::make_shared<const policy::PlanItem>(item));
  return out;
}

std::vector<std::string> gvisor_runtime_classes(const scenario::DeploymentProfile& profile) {
  std::vector<std::string> out;
  for (const auto& c : profile.runtime_classes)
    if (profile.is_gvisor(c)) out.push_back(c);
  return out;
}

std::string runtime_label(const policy::PlanItem& item, const std::vector<std::string>& gvisor_classes) {
  const std::optional<std::string>& cls = item.runtime_class;
  if (!cls) return "runc";
  if (std::find(gvisor_classes.begin(), gvisor_classes.end(), *cls) != gvisor_classes.end()) return "gvisor";
  return *cls;
}

namespace {
PlanItemPtr find_item(const std::vector<PlanItemPtr>& items, const std::string& id) {
  for (const auto& it : items)
    if (it->id == id) return it;
  return nullptr;
}
}  // namespace

void expand_jobs(const std::string& scenario, const std::vector<PlanItemPtr>& base_items,
                 const std::vector<PlanItemPtr>& gvisor_items, const std::vector<std::string>& runtimes,
                 const std::vector<std::string>& node_classes, int attempts,
                 const std::vector<std::string>& gvisor_classes, std::vector<Job>& jobs,
                 std::vector<Skipped>& skipped) {
  for (const auto& item : base_items) {
    const std::string& id = item->id;
    const std::string planned = runtime_label(*item, gvisor_classes);
    for (const auto& runtime : runtimes) {
      PlanItemPtr use;
      std::string why_not;
      if (runtime == planned) {
        use = item;
      } else if (runtime == "gvisor" && planned == "runc") {
        if (item->gpu) {
          why_not = "a GPU service stays on the node's default runtime (gVisor has no GPU passthrough)";
        } else if ((use = find_item(gvisor_items, id)) == nullptr ||
                   runtime_label(*use, gvisor_classes) != "gvisor") {
          use = nullptr;
          why_not = "the deployment offers no hardened runtime class to run it under gVisor";
        }
      } else if (runtime == "runc" && planned == "gvisor") {
        why_not = "the config asks for gVisor; it is never run under runc";
      } else {
        why_not = "the plan resolves this item to runtime " + planned;
      }
      if (!use) {
        skipped.push_back({scenario, id, runtime, why_not});
        continue;
      }
      for (const auto& node : node_classes) jobs.push_back({scenario, use, runtime, node, attempts});
    }
  }
}

void expand_planned_jobs(const Planned& planned, const std::vector<PlanItemPtr>& base_items,
                         const std::vector<std::string>& runtimes,
                         const std::vector<std::string>& node_classes, int attempts,
                         const std::vector<std::string>& gvisor_classes, std::vector<Job>& jobs,
                         std::vector<Skipped>& skipped) {
  const std::size_t first = jobs.size();
  expand_jobs(planned.scenario.name, base_items, planned.gvisor_items, runtimes, node_classes, attempts,
              gvisor_classes, jobs, skipped);
  for (std::size_t j = first; j < jobs.size(); ++j) jobs[j].eval_set = &planned.scenario.eval_set;
}

}  // namespace isoharness::runner
