// Checks a deployment profile accepts by name (verify.h accept_risks).
#include <fmt/format.h>

#include "harness/verify/verify.h"

namespace isoharness::verify {

void accept_risks(std::vector<CheckResult>& checks, const AcceptedRisks& accepted) {
  for (auto& c : checks) {
    if (c.status != CheckStatus::fail) continue;
    const auto it = accepted.find(c.control);
    if (it == accepted.end()) continue;
    c.status = CheckStatus::pass;
    c.known_risk = true;
    c.reason =
        fmt::format("{}accepted by the deployment profile ({}): {}", kKnownRiskPrefix, it->second, c.reason);
  }
}

bool passed_as_known_risk(const nlohmann::json& check) {
  if (!check.is_object()) return false;
  const auto status = check.find("status");
  const auto known = check.find("known_risk");
  return status != check.end() && status->is_string() && status->get<std::string>() == "pass" &&
         known != check.end() && known->is_boolean() && known->get<bool>();
}

}  // namespace isoharness::verify
