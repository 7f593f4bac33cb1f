// `isoharness run`: plan every scenario, deploy each item × runtime × node class ×
// attempt, reach it through the jumphost, upload isoprobe, observe, verify, tear down,
// and write the result document as it goes.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/runner/fanout.h"
#include "harness/runner/sandbox_command.h"

namespace isoharness::runner {

struct Job;

struct RunConfig {
  SandboxCommand command;                   // backend, profile, --out, bundle, host keys, argv
  std::vector<std::string> scenario_paths;  // empty: the default set in command.scenarios_dir
  std::vector<std::string> runtimes;        // empty: each scenario's matrix
  std::vector<std::string> node_classes;    // empty: each scenario's matrix
  std::optional<int> attempts;              // unset: each scenario's matrix
  int parallel = kDefaultParallel;          // sandbox jobs at once (fanout.h)
  int deploy_parallel = 0;                  // deploys at once; 0: default_deploy_parallel()
  bool deny_known_risks = false;
  bool color = false;

  // Test seam: lets a system test change a sandbox's values behind the policy's back
  // (keep CAP_SYS_ADMIN, drop the runtime class) to prove verify catches it.
  std::function<void(const std::string& item_id, const std::string& runtime, nlohmann::json& values)> tamper;
  // Test seam: named weakenings the backend applies behind the plan's back (local:
  // "none-sibling-reachable", "sshd:no-sftp"), recorded in each sandbox's facts.
  std::vector<std::string> test_weakenings;
  // Test seam: rewrites each sandbox's posture document before it is judged, as an agent
  // that controls its isoprobe would (RunSettings::forge_posture); every record then says
  // "tampered".
  std::function<void(const Job& job, nlohmann::json& posture)> forge_posture;
};

struct RunOutcome {
  int exit_code = 0;  // 0 pass, 1 a verdict failed, 3 infrastructure failure
  std::string result_path;
  nlohmann::json result;
  std::vector<std::string> reports;  // files written by the renderers
};

// Throws UserError for bad input (exit 2); infrastructure failures are recorded in the
// result and reported through exit_code 3 so nothing measured is lost.
RunOutcome run(const RunConfig& config);

// The scenario files of the default set, sorted.
std::vector<std::string> default_scenarios(const std::string& scenarios_dir);

}  // namespace isoharness::runner
