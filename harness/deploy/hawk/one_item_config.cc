#include "harness/deploy/hawk/one_item_config.h"

#include "harness/common/error.h"
#include "harness/scenario/scenario.h"

namespace isoharness::deploy::hawk {
namespace {

using nlohmann::json;

void merge_into(json& target, const json& patch) {
  for (const auto& [key, value] : patch.items()) {
    if (value.is_object() && target.contains(key) && target[key].is_object()) {
      merge_into(target[key], value);
    } else {
      target[key] = value;
    }
  }
}

// isolation: absent, a level name, or a block. Only runtime_class is added; nothing else
// of the block changes.
void add_runtime_class(json& item, const std::string& runtime_class) {
  if (!item.contains("isolation") || item["isolation"].is_null()) {
    item["isolation"] = json{{"runtime_class", runtime_class}};
  } else if (item["isolation"].is_string()) {
    item["isolation"] = json{{"level", item["isolation"]}, {"runtime_class", runtime_class}};
  } else if (item["isolation"].is_object()) {
    item["isolation"]["runtime_class"] = runtime_class;
  } else {
    throw UserError("the item's isolation is neither a level nor a block; cannot add runtime_class");
  }
}

}  // namespace

json one_item_config(const json& eval_set, const OneItem& which, const json& overrides) {
  if (!eval_set.is_object() || !eval_set.contains("tasks") || !eval_set["tasks"].is_array() ||
      which.task_index >= eval_set["tasks"].size())
    throw UserError("eval set has no task #" + std::to_string(which.task_index));
  const json& task = eval_set["tasks"][which.task_index];
  if (!task.is_object() || !task.contains("items") || !task["items"].is_array() ||
      which.item_index >= task["items"].size())
    throw UserError("task #" + std::to_string(which.task_index) + " has no item #" +
                    std::to_string(which.item_index));

  json item = task["items"][which.item_index];
  if (!which.add_runtime_class.empty()) add_runtime_class(item, which.add_runtime_class);
  json one_task = task;
  one_task["items"] = json::array({item});

  json config = eval_set;
  config["tasks"] = json::array({one_task});
  if (overrides.is_object()) {
    for (const auto& [key, value] : overrides.items())
      if (scenario::config_override_reserved(key))
        throw UserError("config_overrides may not set '" + key + "'");
    merge_into(config, overrides);
  }
  config["limit"] = 1;
  config["epochs"] = 1;
  if (which.human_agent) config["solvers"] = human_agent_solvers(*which.human_agent);
  return config;
}

json human_agent_solvers(const scenario::HumanAgentSolver& solver) {
  const auto slash = solver.name.find('/');
  const std::string registry = slash == std::string::npos ? solver.name : solver.name.substr(0, slash);
  const std::string name = slash == std::string::npos ? solver.name : solver.name.substr(slash + 1);
  return json::array({{{"package", solver.package},
                       {"name", registry},
                       {"items", json::array({{{"name", name}, {"args", solver.args}}})}}});
}

json sandbox_placement(const json& node_selector, const json& tolerations) {
  json out = json::object();
  if (node_selector.is_object() && !node_selector.empty()) out["nodeSelector"] = node_selector;
  if (tolerations.is_array() && !tolerations.empty()) out["tolerations"] = tolerations;
  return out.empty() ? json(nullptr) : out;
}

}  // namespace isoharness::deploy::hawk
