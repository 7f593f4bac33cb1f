// The run report's typed view of a result document (internal to reports/): what the HTML
// page, the SARIF log and the OpenMetrics text of a run read, taken from the document once.
// Values of the wrong type read as absent; nothing here throws after check_result_shape.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/refusal_view.h"

namespace isoharness::reports {

struct CheckView {
  std::string control;
  std::string family;  // the control's name up to its first ':' ("egress:internet" -> "egress")
  std::string status;  // "pass", "fail", "n/a", "unwitnessed"
  std::string expected, observed, reason, evidence;
  bool self_reported = false;  // judged by the sandbox's own report, not by a witness
};

struct SandboxView {
  std::string id, scenario, item_id, runtime, node_class;
  int attempt = 0;
  std::string error;  // why it could not be checked; empty when it was
  std::vector<CheckView> checks;
  std::map<std::string, double> timings;  // phase ("deploy_s", ..., "total_s") -> seconds
  // "scenario · item · runtime / node · attempt N": the row label and the key a previous
  // run's sandbox is matched by.
  std::string where() const;
};

struct FindingView {
  std::string scenario, item_id, code, severity, message;  // severity "known_risk" or "note"
};

struct RunCounts {
  int pass = 0, fail = 0, na = 0, unwitnessed = 0, self_reported = 0, errors = 0, not_run = 0;
  int checks() const { return pass + fail + na + unwitnessed; }
};

struct RunView {
  std::string verdict, run_id, started, finished;
  std::vector<std::string> scenarios;
  std::vector<SandboxView> sandboxes;  // refusal records are not among them
  std::vector<RefusalRow> refusals;
  std::vector<FindingView> findings;
  std::vector<std::string> not_run;  // "where: reason" of the attempts the run never reached
  RunCounts counts;
};

// Call after check_result_shape (the renderers do).
RunView run_view(const nlohmann::json& result);

// The families of a run's checks, in the order they first appear.
std::vector<std::string> check_families(const RunView& run);

// A matrix cell: every check of one family in one sandbox, as one status. fail if any
// failed, else unwitnessed if any was, else pass if any passed, else n/a; "error" for a
// sandbox that could not be checked; "" when the sandbox has no check of the family.
std::string family_status(const SandboxView& sandbox, const std::string& family);

}  // namespace isoharness::reports
