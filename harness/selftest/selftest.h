// `isoharness selftest`: mutation testing of isolation. Deploys the selftest scenario's
// items (scenarios/selftest/hardened.yaml: every strict control, once on the host kernel
// and once under gVisor) clean and once per weakening of the catalogue (catalogue.h),
// probes and verifies each against the unweakened plan, and reports which controls caught
// which weakening (detection.h). Runs sandboxes in parallel through the runner's job
// machinery (runner::run_job), so deploy, probe and verify are exactly `isoharness run`'s.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::selftest {

struct SelftestConfig {
  std::vector<std::string> runtimes = {"runc", "gvisor"};
  std::vector<std::string> only;  // weakening names; empty = the catalogue (or its quick subset)
  bool quick = false;
  std::string backend = "local";
  std::string deployment_path;  // empty: <scenarios_dir>/deployments/local.yaml
  std::string scenarios_dir = "scenarios";
  std::string out_dir = "out/selftest";
  std::string isoprobe_bundle;
  bool accept_new_host_keys = false;
  int parallel = 4;
  std::chrono::milliseconds posture_deadline{std::chrono::seconds(90)};
  // Test seam (ISOHARNESS_TEST_DISABLE_CHECK): checks judged as if verify lacked them,
  // to show that selftest notices a verifier that lost a check.
  std::vector<std::string> disabled_checks;
  std::vector<std::string> argv;  // recorded in the result
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
