// Every item of every shipped scenario, planned against the shipped deployment profiles,
// held against the sandbox chart's facts (docs/CONTRACTS.md §1, harness/policy/chart_values.h):
// keys and types the chart's schema accepts, and the runtime each service really gets once
// the chart has applied its default (absent = gvisor, CLUSTER_DEFAULT = the node default).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "harness/common/error.h"
#include "harness/policy/chart_values.h"
#include "harness/policy/plan.h"
#include "harness/scenario/scenario.h"
#include "policy_test_util.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace isoharness;

namespace {

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  const fs::path root = test::source_dir() + "/scenarios";
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    const std::string rel = fs::relative(e.path(), root).string();
    // Configs that must not plan, deployment profiles, and a task's own sandbox files.
    if (rel.rfind("invalid/", 0) == 0 || rel.rfind("deployments/", 0) == 0) continue;
    const std::string name = e.path().filename().string();
    if (name == "compose.yaml" || name == "values.yaml" || name.find("compose") != std::string::npos)
      continue;
    out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The class a service must run under, worked out from the plan's typed fields and the
// profile, never from the values under test: a GPU service stays on the node default; the
// agent's service has the item's class; under strict every other service has the item's
// hardened class. At standard every other service gets what the agent's service would:
// the item's class, unless the agent's service is itself the GPU one (its class then says
// nothing), when it is the deployment's default class if that is the node default. (A
// task that names its own class with a GPU agent service would fail here, loudly.)
std::optional<std::string> intended_class(const policy::PlanItem& item, const std::string& service,
                                          const json& sv, const scenario::DeploymentProfile& d) {
  if (policy::service_gpus(sv) > 0) return std::nullopt;
  if (service == "default") return item.runtime_class;
  if (item.isolation.runtime_class) return item.isolation.runtime_class;
  if (item.level == policy::Level::strict) return d.sandbox_runtime_class;
  if (item.runtime_class_source != policy::RuntimeClassSource::gpu_exempt) return item.runtime_class;
  return d.sandbox_runtime_class_is_default ? d.sandbox_runtime_class : std::nullopt;
}

}  // namespace

TEST_CASE("every shipped scenario's values are values the sandbox chart accepts and reads as planned",
          "[policy][chart]") {
  const auto scenarios = shipped_scenarios();
  REQUIRE(scenarios.size() >= 10);
  std::size_t items_checked = 0;
  for (const char* profile :
       {"scenarios/deployments/local.yaml", "scenarios/deployments/staging.example.yaml"}) {
    const auto d = scenario::load_deployment(test::source_dir() + "/" + profile);
    for (const auto& path : scenarios) {
      const auto s = scenario::load_scenario(path);
      const auto plan = policy::plan_scenario(s, d, {});
      for (const auto& item : plan.items) {
        INFO(path << " on " << profile << ": " << item.id);
        const json& values = item.values;
        CHECK(policy::chart_conformance(values).empty());
        for (const auto& problem : policy::chart_conformance(values)) FAIL_CHECK(problem);
        for (const auto& [name, sv] : values["services"].items()) {
          INFO("service " << name);
          CHECK(sv.contains("runtimeClassName"));  // never left to the chart's default
          CHECK(policy::effective_runtime_class(sv) == intended_class(item, name, sv, d));
        }
        ++items_checked;
      }
    }
  }
  CHECK(items_checked >= 20);
}

TEST_CASE("chart conformance names what the chart refuses", "[policy][chart]") {
  json v = {{"services",
             {{"default", {{"gpu", true}, {"networkMode", "none"}}},
              {"Scorer_1", {{"image", "x"}}},
              {"helper", json::object()}}},
            {"allowDomains", "target.example.com"},
            {"egress", true}};
  const auto problems = policy::chart_conformance(v);
  const std::string all = fmt::format("{}", fmt::join(problems, "\n"));
  CHECK_THAT(all, Catch::Contains("services.default.gpu: not a key the sandbox chart allows"));
  CHECK_THAT(all, Catch::Contains("services.default.networkMode: not a key"));
  CHECK_THAT(all, Catch::Contains("services.Scorer_1: the chart refuses this service name"));
  CHECK_THAT(all, Catch::Contains("services.helper.image: required"));
  CHECK_THAT(all, Catch::Contains("allowDomains: must be a list"));
  CHECK_THAT(all, Catch::Contains("egress: not a key"));
  CHECK(problems.size() == 6);
  CHECK(policy::chart_conformance({{"services", {{"default", json::object()}}}}).empty());
}

TEST_CASE("the chart's runtime default: absent is gvisor, CLUSTER_DEFAULT is the node's", "[policy][chart]") {
  CHECK(policy::effective_runtime_class(json::object()) == "gvisor");
  CHECK(policy::effective_runtime_class({{"runtimeClassName", nullptr}}) == "gvisor");
  CHECK_FALSE(policy::effective_runtime_class({{"runtimeClassName", "CLUSTER_DEFAULT"}}).has_value());
  CHECK(policy::effective_runtime_class({{"runtimeClassName", "kata"}}) == "kata");
  CHECK(policy::runtime_class_value(std::nullopt) == "CLUSTER_DEFAULT");
  CHECK(policy::service_gpus({{"resources", {{"limits", {{"nvidia.com/gpu", 2}}}}}}) == 2);
  CHECK(policy::service_gpus({{"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}}) == 1);
  CHECK(policy::service_gpus({{"resources", {{"limits", {{"cpu", "1"}}}}}}) == 0);
  for (const std::string& ok :
       {std::string("default"), std::string("a"), std::string("scorer-2"), std::string(63, 'a')})
    CHECK(policy::chart_service_name_ok(ok));
  for (const std::string& bad : {std::string(), std::string("Scorer"), std::string("-a"), std::string("a-"),
                                 std::string("a_b"), std::string("a.b"), std::string(64, 'a')})
    CHECK_FALSE(policy::chart_service_name_ok(bad));
}

TEST_CASE("plan refuses a service name the chart refuses, with file and line", "[policy][chart]") {
  const std::string yaml =
      "eval_set:\n  isolation: strict\n  tasks:\n    - name: t\n      items:\n        - name: i\n"
      "sandbox_defaults:\n  services:\n    default: {image: a:v1}\n    score_keeper: {image: b:v1}\n";
  auto p = test::plan_yaml(yaml);
  REQUIRE_FALSE(p.accepted());
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0].line == 10);
  CHECK_THAT(p.errors[0].message,
             Catch::Contains("service name 'score_keeper' is refused by the sandbox chart"));
}

TEST_CASE("a GPU item's other services keep the class a non-GPU item's would", "[policy][chart]") {
  const std::string yaml = R"(
name: gpu-standard
eval_set:
  isolation: standard
  tasks:
    - name: t
      items:
        - name: i
sandboxes:
  - task: t
    item: 0
    name: i
    services:
      default: { image: registry.example.com/gpu:1, gpu: true }
      db: { image: registry.example.com/db:1 }
)";
  for (const auto* deployment : {test::kPlatformDeployment, test::kLocalDeployment}) {
    const auto d = scenario::parse_deployment(deployment, "deployment.yaml");
    const auto plan = test::plan_yaml(yaml, deployment);
    INFO(test::all_errors(plan));
    REQUIRE(plan.items.size() == 1);
    const auto& item = plan.items[0];
    CHECK(item.gpu);
    const json& services = item.values["services"];
    CHECK_FALSE(policy::effective_runtime_class(services["default"]));  // the GPU one: node default
    // The platform's hardened class is its default: the database runs under it; the local
    // profile has no default class, so the node's default runtime.
    const std::optional<std::string> want =
        d.sandbox_runtime_class_is_default ? d.sandbox_runtime_class : std::nullopt;
    CHECK(policy::effective_runtime_class(services["db"]) == want);
    CHECK(intended_class(item, "db", services["db"], d) == want);
  }
}
