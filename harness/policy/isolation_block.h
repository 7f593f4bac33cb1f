// One `isolation` block as written (eval-set level or item level): either a level
// (`isolation: strict`) or a mapping of level, runtime_class, allow_domains, allow_cidr,
// non_root, read_only_root. Unknown keys and levels are errors, never ignored.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/policy/plan.h"

namespace isoharness::policy {

struct IsolationBlock {
  bool present = false;
  std::optional<Level> level;
  std::optional<std::string> runtime_class;
  std::optional<std::vector<std::string>> allow_domains;
  std::optional<std::vector<std::string>> allow_cidr;
  std::optional<bool> non_root;
  std::optional<bool> read_only_root;
  bool is_mapping = false;
  std::string pointer;  // where the block is, inside the eval set
};

using ReportFn = std::function<void(const std::string& pointer, std::string message)>;

// Reports problems through `report(pointer, message)` (pointer inside the eval set).
// Domains and CIDRs are checked for form here; what a level allows is checked later.
IsolationBlock parse_isolation_block(const nlohmann::json& v, const std::string& pointer,
                                     const ReportFn& report);

std::optional<Level> parse_level(const nlohmann::json& v);

}  // namespace isoharness::policy
