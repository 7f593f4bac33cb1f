// The chart service settings the local backend applies (env, workingDir, resources,
// dnsRecord) and the ones it refuses by key: read from sandbox values, then into the OCI
// config the container starts with.
#include <catch2/catch.hpp>

#include "harness/common/error.h"
#include "harness/deploy/local/oci_spec.h"
#include "harness/deploy/local/sandbox_spec.h"

using namespace isoharness;
using namespace isoharness::deploy::local;
using nlohmann::json;

namespace {

json values_with(const json& service_keys) {
  json svc = {{"image", "registry.example.com/t:1"}};
  svc.update(service_keys);
  return json{{"services", {{"default", svc}}}};
}

std::string cannot_apply(const json& values) {
  try {
    parse_sandbox_values(values, "item-3");
  } catch (const InfraError& e) {
    return e.what();
  } catch (const UserError& e) {
    return std::string("bad input: ") + e.what();
  }
  return "";
}

json oci_of(const SandboxSpec& spec) {
  BundleInputs in;
  in.runtime = OciRuntime::runc;
  in.hostname = "default";
  in.netns_path = "/var/run/netns/x";
  in.cgroups_path = "/ih-x";
  in.cpuset = "1";
  in.args = {"/usr/sbin/sshd", "-D"};
  return make_oci_config(spec, in);
}

}  // namespace

TEST_CASE("a service's env, working directory and limits reach the container's OCI config", "[local]") {
  SandboxSpec spec = parse_sandbox_values(values_with(json::parse(R"({
    "dnsRecord": true,
    "workingDir": "/srv/task",
    "env": [{"name": "CTF_TARGET", "value": "target.example.com"}, {"name": "CTF_LEVEL", "value": 2},
            {"name": "LANG", "value": "C"}],
    "resources": {"limits": {"cpu": 1.5, "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "512Mi"}}
  })")));
  CHECK(spec.settings.working_dir == "/srv/task");
  CHECK(spec.settings.memory_limit_bytes == 1073741824);
  CHECK(spec.settings.cpu_limit_millis == 1500);
  CHECK(spec.settings.cpu_request_millis == 500);
  CHECK(spec.settings.memory_request_bytes == 536870912);
  const json oci = oci_of(spec);
  const auto& env = oci["process"]["env"];
  CHECK(std::find(env.begin(), env.end(), "CTF_TARGET=target.example.com") != env.end());
  CHECK(std::find(env.begin(), env.end(), "CTF_LEVEL=2") != env.end());
  CHECK(std::find(env.begin(), env.end(), "LANG=C") != env.end());  // replaces the image's
  CHECK(std::count_if(env.begin(), env.end(),
                      [](const json& e) { return e.get<std::string>().starts_with("LANG="); }) == 1);
  CHECK(oci["process"]["cwd"] == "/srv/task");
  const auto& res = oci["linux"]["resources"];
  CHECK(res["memory"]["limit"] == 1073741824);
  CHECK(res["cpu"]["quota"] == 150000);
  CHECK(res["cpu"]["period"] == 100000);
  CHECK(res["cpu"]["shares"] == 512);
  CHECK(res["cpu"]["cpus"] == "1");  // the node class's CPUs stay
}

TEST_CASE("without settings the container keeps the local image's defaults", "[local]") {
  const json oci = oci_of(parse_sandbox_values(values_with(json::object())));
  CHECK(oci["process"]["cwd"] == "/");
  CHECK(oci["process"]["env"].size() == 4);
  CHECK_FALSE(oci["linux"]["resources"].contains("memory"));
  CHECK_FALSE(oci["linux"]["resources"]["cpu"].contains("quota"));
}

TEST_CASE("chart service keys the local backend cannot honour are refused by key, never ignored", "[local]") {
  std::string m = cannot_apply(values_with(json::parse(R"({
    "command": ["/bin/sh"], "args": ["-c", "sleep 1"],
    "readinessProbe": {"exec": {"command": ["true"]}},
    "resources": {"limits": {"ephemeral-storage": "1Gi"}},
    "dnsRecord": false,
    "workingDir": "/usr/lib"
  })")));
  CHECK_THAT(m, Catch::StartsWith("the local backend cannot apply these controls"));
  for (const char* key : {"values.services.default.command: ", "values.services.default.args: ",
                          "values.services.default.readinessProbe: ",
                          "values.services.default.resources.limits.ephemeral-storage: ",
                          "values.services.default.dnsRecord: ", "values.services.default.workingDir: "}) {
    CHECK_THAT(m, Catch::Contains(std::string("item-3: ") + key));
  }
  CHECK_THAT(cannot_apply(values_with({{"resources", {{"limits", {{"memory", "lots"}}}}}})),
             Catch::Contains("bad input: ") && Catch::Contains("not a memory quantity: \"lots\""));
  CHECK_THAT(cannot_apply(values_with({{"env", {{{"name", "A B"}, {"value", "x"}}}}})),
             Catch::Contains("must be {name, value} with a variable name"));
}

TEST_CASE("Kubernetes quantities read as kubelet reads them", "[local]") {
  CHECK(memory_quantity_bytes("2Gi") == 2147483648);
  CHECK(memory_quantity_bytes("1G") == 1000000000);
  CHECK(memory_quantity_bytes(4096) == 4096);
  CHECK(memory_quantity_bytes("0.5Mi") == 524288);
  CHECK_FALSE(memory_quantity_bytes("1gb").has_value());
  CHECK(cpu_quantity_millis("250m") == 250);
  CHECK(cpu_quantity_millis(2) == 2000);
  CHECK(cpu_quantity_millis("0.5") == 500);
  CHECK_FALSE(cpu_quantity_millis("1Gi").has_value());
}
