// What tasks bring with their sandbox (a local sandbox, environment references, extra
// resources, entities, capabilities), the chart's own default service, and the ways out
// the plan expects per port and protocol.
#include <catch2/catch.hpp>
#include <fstream>

#include "tests/support/test_support.h"
#include "tests/unit/policy_test_util.h"

using namespace isoharness;
using namespace isoharness::policy;
using isoharness::test::all_errors;
using isoharness::test::has_finding;
using isoharness::test::plan_yaml;

namespace {

// Two items of one task: a at strict, b at standard; facts for both from `facts`.
std::string two_levels(const std::string& facts) {
  return "eval_set:\n"
         "  tasks:\n"
         "    - name: t\n"
         "      items:\n"
         "        - {name: a, isolation: strict}\n"
         "        - {name: b, isolation: standard}\n" +
         facts;
}

std::string write_file(const test::TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = dir.path / name;
  std::ofstream(path) << text;
  return path.string();
}

const Finding* finding(const PlanItem& item, const std::string& code) {
  for (const auto& f : item.findings)
    if (f.code == code) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("sandbox: local is refused under strict and a known risk at standard, at its line", "[policy]") {
  Plan plan =
      plan_yaml(two_levels("sandboxes:\n"
                           "  - {task: 0, item: 0, sandbox: local}\n"
                           "  - {task: 0, item: 1, sandbox: local}\n"));
  REQUIRE(plan.errors.size() == 1);
  CHECK(plan.errors[0].file == "test.yaml");
  CHECK(plan.errors[0].line == 8);
  CHECK(plan.errors[0].message.find("sandbox: local runs the task's tools in the runner's own pod") !=
        std::string::npos);
  CHECK(plan.errors[0].message.find("strict refuses it") != std::string::npos);
  REQUIRE(plan.items.size() == 2);
  const Finding* f = finding(plan.items[1], "local_sandbox");
  REQUIRE(f);
  CHECK(f->severity == Severity::known_risk);
  CHECK(f->message.starts_with("test.yaml:9:"));
  CHECK(f->message.find("no sandbox") != std::string::npos);
  // Without the fact, neither.
  Plan k8s = plan_yaml(two_levels("sandboxes:\n  - {task: 0, item: 1, sandbox: k8s}\n"));
  INFO(all_errors(k8s));
  CHECK(k8s.accepted());
  CHECK_FALSE(has_finding(k8s.items[1], "local_sandbox"));
}

TEST_CASE("a compose file's environment references are a known risk naming them at every level", "[policy]") {
  test::TempDir dir("ih-policy-task");
  const std::string compose = write_file(dir, "compose.yaml",
                                         "services:\n"
                                         "  default:\n"
                                         "    image: reg/agent:${TAG}\n"
                                         "    environment:\n"
                                         "      TOKEN: $API_TOKEN\n"
                                         "      PRICE: \"$$5\"\n"
                                         "      AGAIN: ${TAG:-x}\n");
  Plan plan = plan_yaml(two_levels("sandbox_defaults: {compose: " + compose + "}\n"));
  INFO(all_errors(plan));
  REQUIRE(plan.accepted());
  for (const auto& item : plan.items) {
    const Finding* f = finding(item, "compose_environment_reference");
    REQUIRE(f);
    CHECK(f->severity == Severity::known_risk);
    CHECK(f->message.starts_with(compose + ":3:22: "));
    CHECK(f->message.find("variables (TAG, API_TOKEN)") != std::string::npos);
    CHECK(f->message.find("runner") != std::string::npos);
  }
  const std::string plain =
      write_file(dir, "plain.yaml", "services:\n  default:\n    image: reg/a:1 # $NOT_READ\n");
  Plan clean = plan_yaml(two_levels("sandbox_defaults: {compose: " + plain + "}\n"));
  REQUIRE(clean.accepted());
  CHECK_FALSE(has_finding(clean.items[1], "compose_environment_reference"));
}

TEST_CASE(
    "task values that add resources, entities or capabilities: refused under strict, all at once, "
    "known risks at standard",
    "[policy]") {
  test::TempDir dir("ih-policy-task");
  const std::string values = write_file(dir, "values.yaml",
                                        "services:\n"
                                        "  default:\n"
                                        "    image: reg/agent:1\n"
                                        "    securityContext:\n"
                                        "      capabilities: {add: [NET_ADMIN, SYS_PTRACE]}\n"
                                        "allowEntities: [world, cluster]\n"
                                        "additionalResources:\n"
                                        "  - {kind: CiliumNetworkPolicy, metadata: {name: open}}\n");
  Plan plan = plan_yaml(two_levels("sandbox_defaults: {values: " + values + "}\n"));
  std::vector<std::string> places;
  for (const auto& e : plan.errors) places.push_back(std::to_string(e.line) + ":" + std::to_string(e.column));
  INFO(all_errors(plan));
  CHECK(places == std::vector<std::string>{"5:28", "5:39", "6:24", "8:5"});
  for (const auto& e : plan.errors) {
    CHECK(e.file == values);
    CHECK(e.message.find("strict refuses it") != std::string::npos);
  }
  CHECK(plan.errors[0].message.find("capabilities.add NET_ADMIN") != std::string::npos);
  CHECK(plan.errors[2].message.find("entity 'cluster'") != std::string::npos);
  CHECK(plan.errors[3].message.find("additionalResources deploys CiliumNetworkPolicy") != std::string::npos);
  REQUIRE(plan.items.size() == 2);
  const auto& standard = plan.items[1];
  for (const char* code : {"task_capabilities", "task_entity", "task_additional_resources"}) {
    const Finding* f = finding(standard, code);
    INFO(code);
    REQUIRE(f);
    CHECK(f->severity == Severity::known_risk);
    CHECK(f->message.starts_with(values + ":"));
    CHECK(f->message.find("passes it through as written") != std::string::npos);
  }
  // world alone is no finding of its own.
  const std::string world = write_file(
      dir, "world.yaml", "services:\n  default:\n    image: reg/agent:1\nallowEntities: [world]\n");
  Plan w = plan_yaml(two_levels("sandbox_defaults: {values: " + world + "}\n"));
  INFO(all_errors(w));
  CHECK(w.accepted());
  CHECK_FALSE(has_finding(w.items[1], "task_entity"));
}

TEST_CASE("a task file without a default service: the plan shows the chart's default, where the agent runs",
          "[policy]") {
  test::TempDir dir("ih-policy-task");
  const std::string compose =
      write_file(dir, "compose.yaml",
                 test::read_text(test::source_dir() + "/tests/fixtures/package_compose/network_mode_none/"
                                                      "compose.yaml"));
  Plan plan = plan_yaml(two_levels("sandbox_defaults: {compose: " + compose + "}\n"));
  INFO(all_errors(plan));
  REQUIRE(plan.accepted());
  for (const auto& item : plan.items) {
    const auto& services = item.values->at("services");
    REQUIRE(services.contains("default"));
    CHECK(services["default"]["image"] == "python:3.12-bookworm");
    CHECK(services["default"]["command"] == nlohmann::json{"tail", "-f", "/dev/null"});
    CHECK_FALSE(services["default"].contains("networkIsolated"));
    CHECK(services["isolated-service"]["networkIsolated"] == true);
    const Finding* f = finding(item, "chart_default_service");
    REQUIRE(f);
    CHECK(f->message.find("not in 'isolated-service'") != std::string::npos);
  }
}
