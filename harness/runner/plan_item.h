// A plan item (isoharness.plan/v1 `items[]`, docs/CONTRACTS.md §3) as the runner uses it.
//
// Jobs carry their item as that document: the plan is handed to the result header, to
// backends and to verify as JSON, and tools and tests build jobs from plan documents. So
// the runner reads an item here, once, into types, and every key it reads is required: the
// policy writes each of them (policy::to_json), and an item without one is a broken plan,
// reported as an error that names the key instead of being run under a default.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace isoharness::runner {

// A plan item that lacks a key the runner needs, or holds it with another type.
class PlanItemError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

struct PlanFinding {
  std::string code, severity, message;
};

struct PlanItemFields {
  std::string id, task, item;
  std::string level;  // "standard", "strict"
  std::size_t task_index = 0, item_index = 0;
  std::optional<std::string> runtime_class;  // of the agent's service; nullopt = node default
  std::string runtime_class_source;          // isolation, option, hardened, task, ...
  bool gpu = false;
  std::vector<PlanFinding> findings;
};

// Throws PlanItemError naming the key.
PlanItemFields read_plan_item(const nlohmann::json& item);

// The item's rendered values (CONTRACTS §1) and expectations (§2): required objects.
const nlohmann::json& plan_values(const nlohmann::json& item);
const nlohmann::json& plan_expect(const nlohmann::json& item);

}  // namespace isoharness::runner
