// Scenario YAML as `isoharness plan` reads it: parse, plan against the local deployment,
// and write the plan in every format.
#include "harness/common/error.h"
#include "harness/policy/plan.h"
#include "harness/scenario/scenario.h"
#include "tests/fuzz/fuzz_support.h"

using namespace isoharness;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const scenario::DeploymentProfile deployment = scenario::parse_deployment(
      fuzz::source_file("scenarios/deployments/local.yaml"), "scenarios/deployments/local.yaml");
  scenario::Scenario s;
  try {
    s = scenario::parse_scenario(fuzz::as_text(data, size), "fuzz.yaml");
  } catch (const UserError& e) {
    (void)e.diagnostics();
    return 0;
  }
  policy::Plan plan = policy::plan_scenario(s, deployment, {});
  (void)policy::to_json(plan).dump(2);
  (void)policy::to_text(plan, false);
  if (plan.accepted()) (void)policy::to_values_yaml(plan);
  return 0;
}
