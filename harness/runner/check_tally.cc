#include "harness/runner/check_tally.h"

namespace isoharness::runner {
namespace {

void add_unwitnessed(CheckTally& tally, const nlohmann::json& record, const nlohmann::json& check) {
  ++tally.unwitnessed;
  if (tally.unwitnessed_checks.size() >= kMaxUnwitnessedShown) return;
  const auto text = [](const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  tally.unwitnessed_checks.push_back(text(record, "id") + " " + text(check, "control") + ": " +
                                     text(check, "reason"));
}

// A check judged on the sandbox's word alone carries `self_reported: true` (verify's
// CheckResult::self_reported): an egress check under `witness: none`, a posture check under
// `node_view: none`.
bool self_reported(const nlohmann::json& check) {
  const auto flag = check.find("self_reported");
  return flag != check.end() && flag->is_boolean() && flag->get<bool>();
}

bool egress_check(const nlohmann::json& check) {
  const auto control = check.find("control");
  return control != check.end() && control->is_string() &&
         control->get<std::string>().rfind("egress:", 0) == 0;
}

}  // namespace

void add_record(CheckTally& tally, const nlohmann::json& record) {
  const auto error = record.find("error");
  if (error != record.end() && !error->is_null()) ++tally.errors;
  const auto checks = record.find("checks");
  if (checks == record.end() || !checks->is_array()) return;
  for (const auto& c : *checks) {
    if (!c.is_object()) continue;
    ++tally.checks;
    if (self_reported(c)) ++(egress_check(c) ? tally.sandbox_reported : tally.posture_self_reported);
    switch (check_status_from_label(c.value("status", ""))) {
      case CheckStatus::pass:
        ++tally.pass;
        break;
      case CheckStatus::fail:
        ++tally.fail;
        if (tally.first_failure.empty()) tally.first_failure = c.value("reason", "");
        break;
      case CheckStatus::na:
        ++tally.na;
        break;
      case CheckStatus::unwitnessed:
        add_unwitnessed(tally, record, c);
        break;
    }
  }
}

CheckTally tally_records(const nlohmann::json& records) {
  CheckTally tally;
  for (const auto& r : records) add_record(tally, r);
  return tally;
}

}  // namespace isoharness::runner
