// The plan's JSON written item by item reads exactly like the whole document dumped, and
// items that render the same share one values and expect block.
#include <catch2/catch.hpp>
#include <sstream>

#include "harness/policy/plan.h"
#include "tests/support/test_support.h"

using namespace isoharness;

namespace {

policy::Plan plan_of(const std::string& scenario_file) {
  auto deployment = scenario::load_deployment(test::source_dir() + "/scenarios/deployments/local.yaml");
  auto s = scenario::load_scenario(test::source_dir() + "/" + scenario_file);
  return policy::plan_scenario(s, deployment, {});
}

}  // namespace

TEST_CASE("write_json is to_json().dump(2), item by item", "[policy]") {
  for (const char* file :
       {"scenarios/mixed.yaml", "scenarios/strict.yaml", "scenarios/invalid/every-error-at-once.yaml"}) {
    INFO(file);
    auto plan = plan_of(file);
    std::ostringstream streamed;
    policy::write_json(plan, streamed);
    CHECK(streamed.str() == policy::to_json(plan).dump(2) + "\n");
  }
  policy::Plan empty;
  std::ostringstream streamed;
  policy::write_json(empty, streamed);
  CHECK(streamed.str() == policy::to_json(empty).dump(2) + "\n");
}

TEST_CASE("items that render the same share their values and expect blocks", "[policy]") {
  std::string yaml = "eval_set:\n  isolation: strict\n  tasks:\n    - name: t\n      items:\n";
  for (int i = 0; i < 50; ++i) yaml += "        - { name: i" + std::to_string(i) + " }\n";
  auto deployment = scenario::load_deployment(test::source_dir() + "/scenarios/deployments/local.yaml");
  auto plan = policy::plan_scenario(scenario::parse_scenario(yaml, "same.yaml"), deployment, {});
  REQUIRE(plan.items.size() == 50);
  CHECK(&plan.items[0].values.get() == &plan.items[49].values.get());
  CHECK(&plan.items[0].expect.get() == &plan.items[49].expect.get());
  CHECK(plan.items[0].values["services"]["default"]["runtimeClassName"] == "gvisor");
}
