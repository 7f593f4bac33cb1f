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
    c.reason =
        fmt::format("{}accepted by the deployment profile ({}): {}", kKnownRiskPrefix, it->second, c.reason);
  }
}

bool passed_as_known_risk(const nlohmann::json& check) {
  if (!check.is_object()) return false;
  const auto status = check.find("status");
  const auto reason = check.find("reason");
  return status != check.end() && status->is_string() && status->get<std::string>() == "pass" &&
         reason != check.end() && reason->is_string() &&
         reason->get<std::string>().starts_with(kKnownRiskPrefix);
}

}  // namespace isoharness::verify
