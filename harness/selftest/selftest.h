// `isoharness selftest`: mutation testing of isolation. Deploys the selftest scenario's
// items (scenarios/selftest/hardened.yaml: every strict control, once on the host kernel
// and once under gVisor) clean and once per weakening of the catalogue (catalogue.h),
// probes and verifies each against the unweakened plan, and reports which controls caught
// which weakening (detection.h). Runs sandboxes in parallel through the runner's job
// machinery (runner::run_job), so deploy, probe and verify are exactly `isoharness run`'s.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/runner/sandbox_command.h"

namespace isoharness::selftest {

struct SelftestConfig {
  runner::SandboxCommand command{.out_dir = "out/selftest"};  // backend: local only
  std::vector<std::string> runtimes = {"runc", "gvisor"};
  std::vector<std::string> only;  // weakening names; empty = the catalogue (or its quick subset)
  bool quick = false;
  // "honest": the real probe; "lying": the lying agent (lying_agent.h), which reports a
  // clean sandbox's posture whatever the sandbox is.
  std::string agent = "honest";
  int parallel = 4;
  // Test seam (ISOHARNESS_TEST_DISABLE_CHECK): checks judged as if verify lacked them,
  // to show that selftest notices a verifier that lost a check.
  std::vector<std::string> disabled_checks;
  bool color = false;
};

struct SelftestOutcome {
  int exit_code = 0;  // 0 every applicable weakening caught and no false alarm, 1 not, 3 infrastructure
  std::string result_path;
  nlohmann::json result;             // isoharness.result/v1 with a `selftest` section
  std::vector<std::string> reports;  // files written
};

// Throws UserError for bad input (unknown weakening or runtime, missing scenario).
SelftestOutcome run_selftest(const SelftestConfig& config);

// The scenario selftest weakens: <scenarios_dir>/selftest/hardened.yaml.
std::string selftest_scenario(const std::string& scenarios_dir);

}  // namespace isoharness::selftest
