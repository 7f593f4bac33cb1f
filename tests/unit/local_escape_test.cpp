// The local backend's values of the escape classes: hostPath volumes (only under the
// host-path root), the service-account token, procMount, capabilities add ALL, what runsc
// refuses, privileged refused by name, and the writable-cgroup weakening.
#include <catch2/catch.hpp>

#include "harness/common/error.h"
#include "harness/deploy/local/capabilities.h"
#include "harness/deploy/local/oci_spec.h"
#include "harness/deploy/local/pod_controls.h"
#include "harness/deploy/local/sandbox_spec.h"
#include "harness/deploy/local/weakenings.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using namespace isoharness::deploy::local;
using nlohmann::json;

namespace {

json esc_strict_values() {
  return json::parse(test::read_text(test::source_dir() + "/tests/fixtures/local/values_strict_gvisor.json"));
}

std::string esc_infra_message(const json& values) {
  try {
    parse_sandbox_values(values, "item-9");
  } catch (const InfraError& e) {
    return e.what();
  }
  return "";
}

json esc_host_path_values(const std::string& source, bool read_only) {
  json v = esc_strict_values();
  v["services"]["default"]["volumes"] = {
      {{"name", "node"}, {"hostPath", {{"path", source}, {"type", "DirectoryOrCreate"}}}}};
  v["services"]["default"]["volumeMounts"] = {
      {{"name", "node"}, {"mountPath", "/node"}, {"readOnly", read_only}}};
  return v;
}

BundleInputs esc_inputs() {
  BundleInputs in;
  in.runtime = OciRuntime::runc;
  in.hostname = "s";
  in.netns_path = "/var/run/netns/s";
  in.cgroups_path = "/s";
  in.args = {"/usr/sbin/sshd"};
  return in;
}

const json* esc_mount_at(const json& config, const std::string& dest) {
  for (const auto& m : config["mounts"])
    if (m["destination"] == dest) return &m;
  return nullptr;
}

}  // namespace

TEST_CASE("a hostPath under the host-path root is bound, read-only or writable as the mount says",
          "[local]") {
  for (bool ro : {true, false}) {
    SandboxSpec s = parse_sandbox_values(esc_host_path_values("/var/lib/isoharness/host-paths/t", ro));
    REQUIRE(s.host_paths.size() == 1);
    CHECK(s.host_paths[0].host_path == "/var/lib/isoharness/host-paths/t");
    CHECK(s.host_paths[0].path == "/node");
    CHECK(s.host_paths[0].create);
    CHECK(s.scratch.empty());
    BundleInputs in = esc_inputs();
    in.host_path_sources = {"/bundle/host-paths/0"};
    json config = make_oci_config(s, in);
    const json* m = esc_mount_at(config, "/node");
    REQUIRE(m);
    CHECK((*m)["type"] == "bind");
    // The runtime binds the staging point the directory was bound at by descriptor, never
    // the path a link could be swapped into.
    CHECK((*m)["source"] == "/bundle/host-paths/0");
    const auto opts = (*m)["options"].get<std::vector<std::string>>();
    CHECK(std::count(opts.begin(), opts.end(), ro ? "ro" : "rw") == 1);
  }
}

TEST_CASE("a hostPath not bound by descriptor is never handed to the runtime as a path", "[local]") {
  const SandboxSpec s = parse_sandbox_values(esc_host_path_values("/var/lib/isoharness/host-paths/t", true));
  try {
    make_oci_config(s, esc_inputs());
    FAIL("make_oci_config took a host path with no staging point");
  } catch (const InfraError& e) {
    CHECK_THAT(e.what(), Catch::Contains("control hostPath") && Catch::Contains("bound by descriptor"));
  }
}

TEST_CASE("a hostPath outside the host-path root, or stepping out of it, is refused by name", "[local]") {
  for (const std::string bad :
       {"/etc", "/var/lib/isoharness/host-paths", "/var/lib/isoharness/host-paths/../x",
        "/var/lib/isoharness/host-paths/a/./b", "/var/lib/isoharness/host-pathsX/a"}) {
    INFO(bad);
    CHECK_THAT(
        esc_infra_message(esc_host_path_values(bad, true)),
        Catch::Contains("hostPath.path") && Catch::Contains("only under /var/lib/isoharness/host-paths"));
  }
  json v = esc_host_path_values("/var/lib/isoharness/host-paths/t", true);
  v["services"]["default"]["volumes"][0]["hostPath"]["type"] = "Socket";
  CHECK_THAT(esc_infra_message(v), Catch::Contains("hostPath.type"));
}

TEST_CASE("automountServiceAccountToken mounts a token directory where the kubelet puts one", "[local]") {
  json v = esc_strict_values();
  CHECK_FALSE(parse_sandbox_values(v).service_account_token);
  v["automountServiceAccountToken"] = true;
  SandboxSpec s = parse_sandbox_values(v);
  CHECK(s.service_account_token);
  BundleInputs in = esc_inputs();
  in.service_account_dir = "/bundle/serviceaccount";
  const json config = make_oci_config(s, in);
  const json* m = esc_mount_at(config, kServiceAccountPath);
  REQUIRE(m);
  CHECK((*m)["source"] == "/bundle/serviceaccount");
  CHECK_FALSE(esc_mount_at(make_oci_config(s, esc_inputs()), kServiceAccountPath));
}

TEST_CASE("procMount Unmasked drops the masked and read-only /proc paths", "[local]") {
  json v = esc_strict_values();
  CHECK_FALSE(make_oci_config(parse_sandbox_values(v), esc_inputs())["linux"]["readonlyPaths"].empty());
  v["services"]["default"]["securityContext"]["procMount"] = "Unmasked";
  const json config = make_oci_config(parse_sandbox_values(v), esc_inputs());
  CHECK(config["linux"]["readonlyPaths"].empty());
  CHECK(config["linux"]["maskedPaths"].empty());
  v["services"]["default"]["securityContext"]["procMount"] = "Open";
  CHECK_THROWS_AS(parse_sandbox_values(v), UserError);
}

TEST_CASE("privileged is refused naming the control and its parts", "[local]") {
  json v = esc_strict_values();
  v["services"]["default"]["securityContext"]["privileged"] = true;
  CHECK_THAT(esc_infra_message(v), Catch::Contains("securityContext.privileged") &&
                                       Catch::Contains("never starts a privileged container"));
}

TEST_CASE("capabilities add ALL keeps every capability; runsc refuses the ones it does not know", "[local]") {
  json v = esc_strict_values();
  v["services"]["default"]["securityContext"]["capabilities"] = {{"drop", {"ALL"}}, {"add", {"ALL"}}};
  SandboxSpec s = parse_sandbox_values(v);
  CHECK(capability_mask(s.capabilities) == (std::uint64_t{1} << 41) - 1);
  // runc grants only what isoharness itself may hold: refused by name when this process's
  // bounding set lacks one (as in a container host), else accepted.
  const std::string missing = capabilities_outside_own_bounding_set(s.capabilities);
  if (missing.empty()) {
    CHECK_NOTHROW(refuse_capabilities_unknown_to(OciRuntime::runc, s));
  } else {
    CHECK_THROWS_WITH(refuse_capabilities_unknown_to(OciRuntime::runc, s),
                      Catch::Contains("bounding set lacks") && Catch::Contains(missing));
  }
  CHECK(capabilities_outside_own_bounding_set({"CAP_CHOWN"}).empty());
  try {
    refuse_capabilities_unknown_to(OciRuntime::runsc, s);
    FAIL("runsc must refuse CAP_BPF");
  } catch (const InfraError& e) {
    CHECK_THAT(e.what(), Catch::Contains("securityContext.capabilities.add") && Catch::Contains("CAP_BPF") &&
                             Catch::Contains("CAP_PERFMON"));
  }
  v["services"]["default"]["securityContext"]["capabilities"] = {{"drop", {"ALL"}}, {"add", {"SYS_MODULE"}}};
  CHECK_NOTHROW(refuse_capabilities_unknown_to(OciRuntime::runsc, parse_sandbox_values(v)));
}

TEST_CASE("oci:cgroup-rw mounts the cgroup filesystem writable", "[local]") {
  json config = make_oci_config(parse_sandbox_values(esc_strict_values()), esc_inputs());
  const auto opts = [&] {
    return (*esc_mount_at(config, "/sys/fs/cgroup"))["options"].get<std::vector<std::string>>();
  };
  const auto before = opts();
  CHECK(std::count(before.begin(), before.end(), "ro") == 1);
  weaken_oci_config({"oci:cgroup-rw"}, config, {"/tmp/none", "/tmp/none"});
  const auto after = opts();
  CHECK(std::count(after.begin(), after.end(), "ro") == 0);
  CHECK(std::count(after.begin(), after.end(), "rw") == 1);
}
