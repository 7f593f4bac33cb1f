// The run report's "refused as required" part (internal to reports/): the records of
// configs the platform must refuse (`refusal` in a sandbox record, harness/runner/
// refusal.h), one row each, read the same way by the Markdown and JUnit renderers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::reports {

// Whether a sandbox record is a refusal scenario's (`refusal`: an object, or true in
// documents written before it carried the rule).
bool is_refusal_record(const nlohmann::json& sandbox);

struct RefusalRow {
  std::string scenario;
  std::string item_id;
  std::string rule;      // the rule the config breaks ("" when the record does not say)
  std::string expected;  // what fail_loudly required, naming the reason when there is one
  std::string answered;  // what the platform (or the planner) said, or why it could not be asked
  std::string status;    // "pass", "fail" or "error"
  std::string verdict;   // for people: "refused", "accepted, never ran", "accepted", ...
  std::string reason;    // the check's reason (on failure, names what was accepted)
  std::string evidence;  // the pods seen while watching an accepted eval
};

// One row per refusal record, in the order sandboxes_in_order gives.
std::vector<RefusalRow> refusal_rows(const std::vector<const nlohmann::json*>& sandboxes);

// "### Refused as required (N of M)" and a table (scenario, rule and reason expected, what
// the platform answered, verdict); "" when there are no rows.
std::string refusal_markdown(const std::vector<RefusalRow>& rows);

}  // namespace isoharness::reports
