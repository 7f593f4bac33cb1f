// Internal to the policy module: the steps of planning one item.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "harness/policy/isolation_block.h"
#include "harness/policy/plan.h"

namespace isoharness::policy {

// Shared by every item of one plan.
struct PlanContext {
  const scenario::Scenario& scenario;
  const scenario::DeploymentProfile& deployment;
  const PlanOptions& options;
  IsolationBlock eval_set_block;  // the eval set's own isolation block (present=false if none)
  std::vector<Diagnostic>& errors;
  std::set<std::string> reported;  // keys of once-only diagnostics
  JsonInterner interner;           // items' values and expect blocks, one copy per distinct one

  // Adds the diagnostic unless one with this key was already reported.
  void report_once(const std::string& key, Diagnostic d) {
    if (reported.insert(key).second) errors.push_back(std::move(d));
  }
};

// Where each effective setting came from: the item's block or the eval set's (pointer of
// the key inside the eval set), for messages.
struct Provenance {
  std::string level;
  std::string runtime_class;
  std::string allow_domains;
  std::string allow_cidr;
  std::string non_root;
  bool runtime_class_from_option = false;
  bool allow_from_item = false;  // allow_domains/allow_cidr named by the item's own block
};

// Merges the blocks and checks every rule that is about the config alone (floor, toggles,
// wildcards under strict, classes offered, a hardened class available). Problems are
// appended to ctx.errors; returns false when the item cannot be planned.
bool resolve_isolation(PlanContext& ctx, std::size_t t, std::size_t i, const std::string& label,
                       EffectiveIsolation& eff, Provenance& prov);

// The runtime class of one service and why.
struct ServiceRuntime {
  std::optional<std::string> runtime_class;
  RuntimeClassSource source = RuntimeClassSource::none;
};
ServiceRuntime service_runtime(const PlanContext& ctx, const EffectiveIsolation& eff, const Provenance& prov,
                               const scenario::ItemFacts& facts, const scenario::ServiceFacts& service);

// Renders CONTRACTS §1 values and the item's findings (and errors about the image).
void render_item(PlanContext& ctx, const scenario::ItemFacts& facts, const Provenance& prov, PlanItem& item);

// What the task brings with its sandbox (task_brought_rules.cc): refused under strict (into
// ctx.errors, at its place in the task's file), known risks at standard.
void check_task_brought(PlanContext& ctx, const scenario::ItemFacts& facts, PlanItem& item);

// CONTRACTS §2 expectations for the agent's service.
nlohmann::json expectations(const PlanContext& ctx, const scenario::ItemFacts& facts, const PlanItem& item);

// The escape classes' keys of the expect block (escape_expectations.cc).
void add_escape_expectations(const PlanContext& ctx, const PlanItem& item, bool gvisor, nlohmann::json& e);

// Stable item id.
std::string item_id(const nlohmann::json& eval_set, std::size_t t, std::size_t i);

}  // namespace isoharness::policy
