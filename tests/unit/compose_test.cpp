// A task's own sandbox file: the compose converter, the chart values reader, and the
// scenario keys that name them (compose: / values: in sandbox_defaults and sandboxes[]).
#include <catch2/catch.hpp>
#include <fstream>

#include "harness/scenario/sandbox_definition.h"
#include "harness/scenario/scenario.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using namespace isoharness::scenario;

namespace {

const std::string kComposeFixtures = test::source_dir() + "/tests/fixtures/compose/";

SandboxReading convert_fixture(const std::string& name) {
  return convert_compose(test::read_text(kComposeFixtures + name), "fx/" + name);
}

std::vector<std::string> compose_lines_of(const std::vector<Diagnostic>& errors) {
  std::vector<std::string> out;
  for (const auto& d : errors) out.push_back(d.to_string());
  return out;
}

// Whether some diagnostic starts with `where` and contains `what`.
bool has_compose_error(const std::vector<Diagnostic>& errors, const std::string& where,
                       const std::string& what) {
  for (const auto& line : compose_lines_of(errors)) {
    if (line.starts_with(where) && line.find(what) != std::string::npos) return true;
  }
  return false;
}

std::string load_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

void write_task_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

const char* kTaskEvalSet = R"(eval_set:
  tasks:
    - name: ctf
      items:
        - {name: easy}
        - {name: hard}
)";

}  // namespace

TEST_CASE("a compose file converts to the chart's services as the sandbox package converts it",
          "[scenario]") {
  SandboxReading r = convert_fixture("ctf/compose.yaml");
  INFO(Catch::Detail::stringify(compose_lines_of(r.errors)));
  REQUIRE(r.errors.empty());
  const SandboxDefinition& d = r.definition;
  // The first of several services becomes "default"; the rest keep their names, in file order.
  REQUIRE(d.services.size() == 3);
  CHECK(d.services[0].name == "default");
  CHECK(d.services[1].name == "target");
  CHECK(d.services[2].name == "grader");
  const auto expected = nlohmann::json::parse(test::read_text(kComposeFixtures + "ctf/expected.json"));
  for (const auto& s : d.services) {
    INFO(s.name << ": " << s.chart.dump());
    CHECK(s.chart == expected[s.name]);
  }
  // The facts every existing rule reads.
  CHECK(d.services[0].image == "registry.example.com/ctf/agent:2.0");
  CHECK_FALSE(d.services[0].image_user_root.has_value());  // no user: stated
  CHECK(d.services[1].image_user_root == false);           // user: "1000:1000"
  CHECK(d.services[2].image_user_root == true);            // user: 0
  CHECK(d.services[2].network_mode == "none");
  CHECK_FALSE(d.services[0].network_mode.has_value());
  CHECK_FALSE(d.services[0].gpu);
  CHECK(d.workdir == "/home/agent");
  CHECK_FALSE(d.runtime_class.has_value());
  CHECK(d.allow_domains == std::vector<std::string>{"pypi.org", "files.pythonhosted.org"});
  CHECK(d.allow_entities == std::vector<std::string>{"world"});
  CHECK(d.allow_cidr.empty());
  CHECK(d.volumes == nlohmann::json{{"flag-store", nlohmann::json::object()}});
}

TEST_CASE("a GPU reservation is asked for as nvidia.com/gpu, and x-default picks the default service",
          "[scenario]") {
  SandboxReading r = convert_fixture("gpu-compose.yaml");
  INFO(Catch::Detail::stringify(compose_lines_of(r.errors)));
  REQUIRE(r.errors.empty());
  const auto& d = r.definition;
  REQUIRE(d.services.size() == 2);
  CHECK(d.services[0].name == "default");  // trainer, marked x-default: true
  CHECK(d.services[0].gpu);
  CHECK(d.services[0].chart["resources"] == nlohmann::json::parse(R"({"limits": {"nvidia.com/gpu": 1}})"));
  CHECK_FALSE(d.services[0].chart.contains("x-default"));
  CHECK(d.services[1].name == "monitor");
  CHECK(d.services[1].chart["runtimeClassName"] == "gvisor");
  CHECK(d.runtime_class == "gvisor");
}

TEST_CASE("every compose key the converter cannot take is refused by name at its line, all at once",
          "[scenario]") {
  SandboxReading r = convert_fixture("ctf/refused.yaml");
  const auto& e = r.errors;
  INFO(Catch::Detail::stringify(compose_lines_of(e)));
  CHECK(has_compose_error(e,
                          "fx/ctf/refused.yaml:4:5: service 'default': ", "unsupported compose key 'ports'"));
  CHECK(has_compose_error(
      e, "fx/ctf/refused.yaml:5:5: service 'default': ", "unsupported compose key 'privileged'"));
  CHECK(has_compose_error(
      e, "fx/ctf/refused.yaml:6:5: service 'default': ", "unsupported compose key 'security_opt'"));
  CHECK(
      has_compose_error(e, "fx/ctf/refused.yaml:8:9: service 'default': ", "a host path cannot be mounted"));
  CHECK(
      has_compose_error(e, "fx/ctf/refused.yaml:9:5: service 'default': ", "unsupported byte value \"1x\""));
  CHECK(has_compose_error(
      e, "fx/ctf/refused.yaml:11:7: service 'default': ", "must be a list starting with CMD"));
  CHECK(has_compose_error(e, "fx/ctf/refused.yaml:12:7: service 'default': ",
                          "unsupported compose key 'disable' in healthcheck"));
  CHECK(has_compose_error(
      e, "fx/ctf/refused.yaml:14:7: service 'default': ", "unsupported compose key 'replicas' in deploy"));
  CHECK(has_compose_error(e, "fx/ctf/refused.yaml:15:3: service 'Bad_Name': ", "not a name the chart takes"));
  CHECK(has_compose_error(
      e, "fx/ctf/refused.yaml:17:5: service 'Bad_Name': ", "network_mode must be none or bridge"));
  CHECK(has_compose_error(e, "fx/ctf/refused.yaml:18:5: service 'Bad_Name': ", "user must be a numeric uid"));
  CHECK(has_compose_error(e, "fx/ctf/refused.yaml:20:9: service 'Bad_Name': ", "NAME=value"));
  CHECK(has_compose_error(e, "fx/ctf/refused.yaml:21:1: ", "unsupported compose key 'networks'"));
  CHECK(has_compose_error(e, "fx/ctf/refused.yaml:23:1: ", "unsupported compose key 'secrets'"));
  CHECK(
      has_compose_error(e, "fx/ctf/refused.yaml:26:3: ", "'automount_service_account_token' is not carried"));
  CHECK(e.size() == 15);
  // Top to bottom, as the file reads.
  CHECK(std::is_sorted(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.line < b.line; }));
}

TEST_CASE("compose: the package's quantities, durations and default-service rules", "[scenario]") {
  auto service = [](const std::string& body) {
    SandboxReading r = convert_compose("services:\n  default:\n    image: i\n" + body, "c.yaml");
    INFO(Catch::Detail::stringify(compose_lines_of(r.errors)));
    REQUIRE(r.errors.empty());
    return r.definition.services[0].chart;
  };
  CHECK(service("    mem_limit: 512b\n")["resources"]["limits"]["memory"] == "512");
  CHECK(service("    mem_limit: 0.5G\n")["resources"]["limits"]["memory"] == "0.5Gi");
  CHECK(service("    mem_limit: 3KB\n")["resources"]["requests"]["memory"] == "3Ki");
  // deploy.resources wins over the shortcuts.
  CHECK(service(
            "    mem_limit: 1g\n    deploy: {resources: {limits: {memory: 2g}}}\n")["resources"]["limits"] ==
        nlohmann::json{{"memory", "2Gi"}});
  auto hc = service(
      "    healthcheck: {test: [CMD, \"true\"], interval: 1h2m3s, start_interval: 1s}\n")["readinessProbe"];
  CHECK(hc == nlohmann::json::parse(R"({"exec": {"command": ["true"]}, "periodSeconds": 3723})"));
  CHECK(service("    command: a  b\tc\n")["args"] == nlohmann::json{"a", "b", "c"});
  CHECK(service("    network_mode: bridge\n").contains("networkIsolated") == false);

  auto refused = [](const std::string& text) {
    return compose_lines_of(convert_compose(text, "c.yaml").errors);
  };
  // A lone service keeps its name (the package renames only the first of several); Helm
  // then merges the chart's own default service in, where Inspect runs the agent.
  CHECK(refused("services:\n  agent:\n    image: i\n").empty());
  SandboxReading lone = convert_compose("services:\n  agent:\n    image: i\n", "c.yaml");
  REQUIRE(lone.definition.services.size() == 2);
  CHECK(lone.definition.services[0].name == "default");
  CHECK(lone.definition.services[0].from_chart_values);
  CHECK(
      lone.definition.services[0].chart ==
      nlohmann::json::parse(R"({"image": "python:3.12-bookworm", "command": ["tail", "-f", "/dev/null"]})"));
  CHECK(lone.definition.services[1].name == "agent");
  CHECK_FALSE(lone.definition.services[1].from_chart_values);
  CHECK(converted_values(lone.definition)["services"].size() == 1);  // the package's output has no default
  CHECK(refused("volumes: {}\n") ==
        std::vector<std::string>{"c.yaml:1:1: a compose file needs services: (this file has none)"});
  CHECK(refused("services:\n  default:\n    image: i\n    healthcheck: {test: [CMD, x], interval: 1d}\n")[0]
            .find("unsupported duration \"1d\"") != std::string::npos);
  // The chart's own default service has an image; any other service needs one.
  CHECK(refused("services:\n  default:\n    working_dir: /w\n  helper:\n    user: \"1000\"\n") ==
        std::vector<std::string>{
            "c.yaml:4:3: service 'helper': a service needs an image (the chart pulls it from a registry)"});
  CHECK(refused("services: [\n")[0].starts_with("c.yaml:2:"));  // YAML syntax errors keep their place
}

TEST_CASE("a chart values file is held against the chart's schema", "[scenario]") {
  SandboxReading r = read_chart_values(test::read_text(kComposeFixtures + "values/values.yaml"), "v.yaml");
  INFO(Catch::Detail::stringify(compose_lines_of(r.errors)));
  REQUIRE(r.errors.empty());
  const auto& d = r.definition;
  REQUIRE(d.services.size() == 2);
  CHECK(d.services[0].name == "default");
  CHECK(d.services[0].gpu);  // resources.limits nvidia.com/gpu
  CHECK(d.services[0].image_user_root == false);
  CHECK(d.services[0].chart["args"] == nlohmann::json{"sleep infinity"});
  CHECK(d.services[1].network_mode == "none");
  CHECK_FALSE(d.runtime_class.has_value());  // CLUSTER_DEFAULT pins nothing
  CHECK(d.workdir == "/work");
  CHECK(d.allow_domains == std::vector<std::string>{"huggingface.co"});
  CHECK(d.allow_cidr == std::vector<std::string>{"198.51.100.0/24"});
  CHECK(d.allow_entities == std::vector<std::string>{"world"});
  CHECK(d.volumes == nlohmann::json{{"data", nlohmann::json::object()}});

  SandboxReading bad =
      read_chart_values(test::read_text(kComposeFixtures + "values/refused-values.yaml"), "v.yaml");
  const auto& e = bad.errors;
  INFO(Catch::Detail::stringify(compose_lines_of(e)));
  CHECK(has_compose_error(
      e, "v.yaml:4:5: service 'default': ", "'gpu' is not a service key of the agent-env chart"));
  CHECK(has_compose_error(e, "v.yaml:5:5: service 'default': ", "'networkMode' is not a service key"));
  CHECK(has_compose_error(e, "v.yaml:6:5: service 'default': ", "'dnsRecord' must be true or false"));
  CHECK(has_compose_error(e, "v.yaml:7:5: service 'default': ", "per-network segmentation is not verified"));
  CHECK(has_compose_error(e, "v.yaml:8:3: service 'scorer_1': ", "does not match the chart's pattern"));
  CHECK(has_compose_error(e, "v.yaml:8:3: service 'scorer_1': ", "a service needs an image"));
  CHECK(has_compose_error(
      e, "v.yaml:10:1: ", "'automountServiceAccountToken' is allowed by the chart but isoharness cannot"));
  CHECK(has_compose_error(e, "v.yaml:11:1: ", "additionalResources must be a list"));
  CHECK(has_compose_error(e, "v.yaml:12:1: ", "'ingress' is not a key of the agent-env chart's values"));
  CHECK(e.size() == 9);
  // No default service: Helm merges the chart's own in, and the agent runs there.
  SandboxReading no_default = read_chart_values("services: {scorer: {image: i}}\n", "v.yaml");
  REQUIRE(no_default.errors.empty());
  REQUIRE(no_default.definition.services.size() == 2);
  CHECK(no_default.definition.services[0].name == "default");
  CHECK(no_default.definition.services[0].from_chart_values);
  CHECK(no_default.definition.services[0].image == "python:3.12-bookworm");
  CHECK(no_default.definition.services[1].name == "scorer");
  CHECK(compose_lines_of(read_chart_values("services: [a]\n", "v.yaml").errors) ==
        std::vector<std::string>{"v.yaml:1:1: services must map service names to services"});
}

TEST_CASE("a values file's allowDomainsPorts is read as the chart takes it", "[scenario]") {
  SandboxReading ok = read_chart_values(
      "services: {default: {image: i}}\nallowDomains: [a.example.com]\n"
      "allowDomainsPorts:\n  - {port: 8443, protocol: tcp}\n  - {port: 5353, domain: a.example.com}\n",
      "v.yaml");
  REQUIRE(ok.errors.empty());
  CHECK(ok.definition.allow_domains_ports == nlohmann::json::parse(R"([{"port": 8443, "protocol": "TCP"},
                                  {"port": 5353, "protocol": "ANY", "domain": "a.example.com"}])"));
  SandboxReading bad = read_chart_values(
      "services: {default: {image: i}}\nallowDomainsPorts:\n  - {port: 443}\n  - {port: 0}\n"
      "  - {port: 9, protocol: SCTP}\n  - {port: 9, via: x}\n  - {port: 443, protocol: UDP}\n",
      "v.yaml");
  INFO(Catch::Detail::stringify(compose_lines_of(bad.errors)));
  CHECK(has_compose_error(bad.errors, "v.yaml:3:5: ", "the chart refuses TCP (and ANY) on ports 80 and 443"));
  CHECK(has_compose_error(bad.errors, "v.yaml:4:5: ", "port required"));
  CHECK(has_compose_error(bad.errors, "v.yaml:5:", "must be TCP, UDP or ANY"));
  CHECK(has_compose_error(bad.errors, "v.yaml:6:", "is not a key of an allowDomainsPorts entry"));
  CHECK(bad.errors.size() == 4);  // UDP 443 is the chart's to allow
}

TEST_CASE("scenario: sandbox_defaults names a compose file relative to the scenario", "[scenario]") {
  test::TempDir dir("ih-compose");
  write_task_file(dir.path / "tasks/ctf/compose.yaml",
                  test::read_text(kComposeFixtures + "ctf/compose.yaml"));
  write_task_file(dir.path / "tasks/ctf/values.yaml",
                  test::read_text(kComposeFixtures + "values/values.yaml"));
  const std::string text =
      std::string(kTaskEvalSet) +
      "sandbox_defaults:\n  compose: tasks/ctf/compose.yaml\n  provider_tools: [web_search]\n"
      "sandboxes:\n  - {task: ctf, item: 1, values: tasks/ctf/values.yaml}\n";
  write_task_file(dir.path / "s.yaml", text);
  Scenario s = load_scenario((dir.path / "s.yaml").string());
  const ItemFacts& easy = s.facts[0][0];
  CHECK(easy.sandbox_kind == "compose");
  CHECK(easy.sandbox_file == (dir.path / "tasks/ctf/compose.yaml").string());
  REQUIRE(easy.services.size() == 3);
  CHECK(easy.services[2].name == "grader");
  CHECK(easy.services[2].network_mode == "none");
  CHECK(easy.services[0].chart["env"][0]["value"] == "target");
  CHECK(easy.task_allow_domains.size() == 2);
  CHECK(easy.task_volumes.contains("flag-store"));
  CHECK(easy.provider_tools == std::vector<std::string>{"web_search"});
  const ItemFacts& hard = s.facts[0][1];
  CHECK(hard.sandbox_kind == "values");
  CHECK(hard.declared);
  CHECK(hard.workdir == "/work");
  CHECK(hard.services[0].gpu);
  CHECK(hard.task_allow_cidr == std::vector<std::string>{"198.51.100.0/24"});
  CHECK(hard.provider_tools == std::vector<std::string>{"web_search"});  // from sandbox_defaults
}

TEST_CASE("scenario: bad sandbox files and facts that contradict them are errors with file and line",
          "[scenario]") {
  test::TempDir dir("ih-compose");
  write_task_file(dir.path / "compose.yaml",
                  "services:\n  default:\n    image: i\n    user: \"1000\"\n    ports: [80]\n");
  auto load = [&](const std::string& facts) {
    write_task_file(dir.path / "s.yaml", std::string(kTaskEvalSet) + facts);
    return load_error_of([&] { load_scenario((dir.path / "s.yaml").string()); });
  };
  const std::string s = (dir.path / "s.yaml").string();
  const std::string c = dir.path.string() + "/compose.yaml";
  CHECK_THAT(load("sandbox_defaults:\n  compose: missing.yaml\n"),
             Catch::Contains(s + ":8:3: cannot read the compose file " + dir.path.string() +
                             "/missing.yaml (a relative path is relative to the scenario file)"));
  // The compose file's own problems are located in the compose file.
  CHECK_THAT(load("sandbox_defaults:\n  compose: compose.yaml\n"),
             Catch::Contains(c + ":5:5: service 'default': unsupported compose key 'ports'"));
  write_task_file(dir.path / "compose.yaml", "services:\n  default:\n    image: i\n    user: \"1000\"\n");
  std::string both =
      load("sandbox_defaults:\n  compose: compose.yaml\n  values: compose.yaml\n  services: {a: {}}\n");
  CHECK_THAT(both, Catch::Contains(s + ":9:3: give compose: or values:, not both"));
  CHECK_THAT(both, Catch::Contains(s + ":10:3: 'services' is decided by the compose file"));
  CHECK_THAT(load("sandboxes:\n  - {task: 0, item: 0, compose: 7}\n"),
             Catch::Contains(s + ":8:24: compose must be the path of the task's compose.yaml"));
  // On top of a sandbox_defaults file, an entry may not change what the file decides.
  CHECK_THAT(
      load("sandbox_defaults: {compose: compose.yaml}\nsandboxes:\n  - {task: 0, item: 1, gpu: true}\n"),
      Catch::Contains(s + ":9:24: 'gpu' is decided by the item's compose file " + c));
  CHECK_THAT(load("sandbox_defaults: {compose: compose.yaml, image_user: root}\n"),
             Catch::Contains(s + ":7:43: image_user contradicts service 'default' of " + c +
                             ", whose user: makes it non-root"));
  CHECK(load("sandbox_defaults: {compose: compose.yaml, image_user: non-root}\n") == "(no error)");
}

TEST_CASE("a hostile or malformed sandbox file is refused with its place, never half-read", "[scenario]") {
  auto errors = [](SandboxReading r) { return compose_lines_of(r.errors); };
  CHECK(errors(convert_compose("services:\n  default:\n    image: \"a\x01\"\n", "c.yaml")) ==
        std::vector<std::string>{"c.yaml:3:14: a control character (byte 0x01 here) is not allowed in YAML"});
  CHECK_THAT(errors(convert_compose("a: &a [x, *a]\nservices: {}\n", "c.yaml"))[0],
             Catch::StartsWith("c.yaml:1:") && Catch::Contains("cycle"));
  CHECK(errors(read_chart_values("- just\n- a list\n", "v.yaml")) ==
        std::vector<std::string>{
            "v.yaml:1:1: a values file of the agent-env chart needs services: (this file has none)"});
  CHECK(
      errors(convert_compose("services:\n  default:\n    image: i\n  default:\n    image: j\n", "c.yaml")) ==
      std::vector<std::string>{
          "c.yaml:4:3: duplicate key 'default' (each key may appear once in a mapping)"});
}

TEST_CASE("the sandbox package's own fixture pairs convert to the package's values", "[scenario]") {
  const std::string root = test::source_dir() + "/tests/fixtures/package_compose/";
  std::size_t pairs = 0;
  for (const auto& dir : std::filesystem::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const std::string name = dir.path().filename().string();
    INFO("fixture pair " << name);
    SandboxReading r =
        convert_compose(test::read_text((dir.path() / "compose.yaml").string()), name + "/compose.yaml");
    INFO(Catch::Detail::stringify(compose_lines_of(r.errors)));
    REQUIRE(r.errors.empty());
    const nlohmann::json expected =
        parse_yaml(test::read_text((dir.path() / "helm-values.yaml").string()), name + "/helm-values.yaml")
            .value;
    const nlohmann::json got = converted_values(r.definition);
    INFO("got " << got.dump(1) << "\nexpected " << expected.dump(1));
    CHECK(got == expected);
    ++pairs;
  }
  CHECK(pairs == 2);  // basic and network_mode_none, every pair the package ships
}

TEST_CASE("compose devices are refused as the package refuses them, pointing to x-inspect_k8s_sandbox",
          "[scenario]") {
  auto errors = [](const std::string& text) {
    return compose_lines_of(convert_compose(text, "c.yaml").errors);
  };
  const auto reserved = errors(
      "services:\n  default:\n    image: i\n    deploy:\n      resources:\n        reservations:\n"
      "          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]\n");
  REQUIRE(reserved.size() == 1);
  CHECK(
      reserved[0].starts_with("c.yaml:7:11: service 'default': 'devices' is refused by the sandbox package"));
  CHECK(reserved[0].find("x-inspect_k8s_sandbox: {resources: {limits: {nvidia.com/gpu: N}}}") !=
        std::string::npos);
  const auto top = errors("services:\n  default:\n    image: i\n    devices: [/dev/nvidia0]\n");
  REQUIRE(top.size() == 1);
  CHECK(top[0].starts_with("c.yaml:4:5: service 'default': unsupported compose key 'devices'"));
  CHECK(top[0].find("nvidia.com/gpu") != std::string::npos);
  // The way the package takes: the service's x-inspect_k8s_sandbox resources.
  SandboxReading ok = convert_compose(
      "services:\n  default:\n    image: i\n    x-inspect_k8s_sandbox: {resources: {limits: {nvidia.com/gpu: "
      "2}}}\n",
      "c.yaml");
  REQUIRE(ok.errors.empty());
  CHECK(ok.definition.services[0].gpu);
}

TEST_CASE("what a task brings: environment references, entities, extra resources, capabilities",
          "[scenario]") {
  const auto refs = environment_references(
      "services:\n  default:\n    image: reg/${IMAGE_TAG}:$VERSION # a $COMMENTED one\n"
      "    environment: {A: \"$$LITERAL\", B: '${WITH_DEFAULT:-x}', C: ${DASH-y}, D: $$${AFTER}}\n"
      "# $NOT_THIS\n    working_dir: /w$ \n    command: \"${unclosed\"\n",
      "c.yaml");
  std::vector<std::string> names;
  for (const auto& r : refs)
    names.push_back(r.what + "@" + std::to_string(r.where.line) + ":" + std::to_string(r.where.column));
  CHECK(names == std::vector<std::string>{"IMAGE_TAG@3:16", "VERSION@3:29", "WITH_DEFAULT@4:39", "DASH@4:63",
                                          "AFTER@4:79"});
  for (const auto& r : refs) CHECK(r.kind == BroughtKind::environment_reference);

  SandboxReading c = convert_compose(
      "services:\n  default:\n    image: reg/${TAG}\nx-inspect_k8s_sandbox:\n  allow_entities: [world, "
      "cluster]\n",
      "c.yaml");
  REQUIRE(c.errors.empty());
  REQUIRE(c.definition.brought.size() == 2);
  CHECK(c.definition.brought[0].what == "TAG");
  CHECK(c.definition.brought[1].kind == BroughtKind::entity);
  CHECK(c.definition.brought[1].what == "cluster");
  CHECK(c.definition.brought[1].where.to_string().starts_with("c.yaml:5:27: "));

  SandboxReading v = read_chart_values(
      "services:\n  default:\n    securityContext:\n      privileged: true\n      capabilities: {add: "
      "[NET_ADMIN]}\n"
      "allowEntities: [kube-apiserver]\nadditionalResources:\n  - {kind: CiliumNetworkPolicy}\n",
      "v.yaml");
  INFO(Catch::Detail::stringify(compose_lines_of(v.errors)));
  REQUIRE(v.errors.empty());
  std::vector<std::string> brought;
  for (const auto& b : v.definition.brought)
    brought.push_back(std::string(brought_kind_name(b.kind)) + " " + b.what + " " + b.where.to_string());
  CHECK(brought ==
        std::vector<std::string>{
            "capability privileged v.yaml:4:7: privileged: true (every capability, every device)",
            "capability NET_ADMIN v.yaml:5:28: capabilities.add NET_ADMIN",
            "entity kube-apiserver v.yaml:6:17: entity 'kube-apiserver' opens egress beyond the internet "
            "(Cilium's kube-apiserver)",
            "additional_resources CiliumNetworkPolicy v.yaml:8:5: additionalResources deploys "
            "CiliumNetworkPolicy with the sandbox"});
}
