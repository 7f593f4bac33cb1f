// What every command that reaches sandboxes (`run`, `check`, `parity`, `selftest`) is told
// the same way: which backend, where its scenarios and deployment profile are, where it
// writes, which isoprobe bundle it uploads, whether it accepts new host keys, and the
// command line it records. Each command's config embeds one; the CLI binds its flags once
// (harness/cli/options.cc), and the run session takes it as it is (session.h), so a setting
// every sandbox command shares is a field here, its flag there, and what reads it.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/scenario/backend_kind.h"
#include "reports/reports.h"

namespace isoharness::runner {

struct SandboxCommand {
  scenario::BackendKind backend = scenario::BackendKind::local;  // `check`: existing (nothing deployed)
  std::string deployment_path;              // empty: <scenarios_dir>/deployments/<backend>.yaml
  std::string scenarios_dir = "scenarios";  // where the default scenarios and profiles live
  std::string out_dir = "out";              // result.json, the journal, the reports
  std::string isoprobe_bundle;              // empty: found (harness/common/install_paths.h)
  bool accept_new_host_keys = false;        // accept and record keys nothing pins
  std::chrono::milliseconds posture_deadline{std::chrono::seconds(90)};  // one `isoprobe posture`
  std::vector<std::string> argv;  // the command line as given: the result's run.argv
  // What the reports read besides the result (reports::ReportInputs). Each command binds
  // the flags it offers (run and check: all; parity: --metrics).
  std::string sarif_path;     // --sarif FILE: the findings as SARIF 2.1.0
  std::string metrics_path;   // --metrics FILE: OpenMetrics text
  std::string previous_path;  // --previous FILE: an earlier run's result.json, for report.html
  // --history DB: given the finished result, the previous run of the same scenarios and
  // deployment (null when there is none). Set by the CLI, which may read a history.
  std::function<nlohmann::json(const nlohmann::json& result)> find_previous;
};

// The reports' inputs for a finished result. A --previous file that cannot be read or
// parsed is shown on the page as unreadable (a string in place of the document), never
// fatal: the run's own verdict stands. Throws nothing.
reports::ReportInputs report_inputs(const SandboxCommand& command, const nlohmann::json& result);

}  // namespace isoharness::runner
