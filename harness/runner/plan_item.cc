#include "harness/runner/plan_item.h"

namespace isoharness::runner {
namespace {

const nlohmann::json& required_key(const nlohmann::json& item, const char* key, const char* what) {
  if (!item.is_object()) throw PlanItemError("plan item: not a mapping");
  auto it = item.find(key);
  if (it == item.end()) throw PlanItemError(std::string("plan item: no '") + key + "' (" + what + ")");
  return *it;
}

template <typename T>
T required(const nlohmann::json& item, const char* key, const char* what) {
  const nlohmann::json& v = required_key(item, key, what);
  try {
    return v.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw PlanItemError(std::string("plan item: '") + key + "' is not " + what + ": " + v.dump());
  }
}

const nlohmann::json& required_object(const nlohmann::json& item, const char* key) {
  const nlohmann::json& v = required_key(item, key, "a mapping");
  if (!v.is_object()) throw PlanItemError(std::string("plan item: '") + key + "' is not a mapping");
  return v;
}

}  // namespace

PlanItemFields read_plan_item(const nlohmann::json& item) {
  PlanItemFields f;
  f.id = required<std::string>(item, "id", "a string");
  f.task = required<std::string>(item, "task", "a string");
  f.item = required<std::string>(item, "item", "a string");
  f.level = required<std::string>(item, "level", "a level name");
  f.task_index = required<std::size_t>(item, "task_index", "an index");
  f.item_index = required<std::size_t>(item, "item_index", "an index");
  const nlohmann::json& runtime_class = required_key(item, "runtime_class", "a class name or null");
  if (!runtime_class.is_null())
    f.runtime_class = required<std::string>(item, "runtime_class", "a class name or null");
  f.runtime_class_source = required<std::string>(item, "runtime_class_source", "a string");
  f.gpu = required<bool>(item, "gpu", "true or false");
  const nlohmann::json& findings = required_key(item, "findings", "a list");
  if (!findings.is_array()) throw PlanItemError("plan item: 'findings' is not a list");
  for (const auto& finding : findings) {
    f.findings.push_back({required<std::string>(finding, "code", "a string"),
                          required<std::string>(finding, "severity", "a string"),
                          required<std::string>(finding, "message", "a string")});
  }
  return f;
}

const nlohmann::json& plan_values(const nlohmann::json& item) {
  return required_object(item, "values");
}

const nlohmann::json& plan_expect(const nlohmann::json& item) {
  return required_object(item, "expect");
}

}  // namespace isoharness::runner
