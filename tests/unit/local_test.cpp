// Unit tests of the local backend's pure parts: reading sandbox values and the profile,
// capability sets, the seccomp conversion and the OCI translation.
#include <catch2/catch.hpp>

#include "harness/common/error.h"
#include "harness/deploy/local/capabilities.h"
#include "harness/deploy/local/oci_spec.h"
#include "harness/deploy/local/run_state.h"
#include "harness/deploy/local/sandbox_spec.h"
#include "harness/deploy/local/seccomp_profile.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using namespace isoharness::deploy::local;
using nlohmann::json;

namespace {

json fixture(const std::string& name) {
  return json::parse(test::read_text(test::source_dir() + "/tests/fixtures/local/" + name));
}

std::string infra_message(const json& values) {
  try {
    parse_sandbox_values(values, "item-7");
  } catch (const InfraError& e) {
    return e.what();
  }
  return "";
}

std::string user_message(const json& values) {
  try {
    parse_sandbox_values(values, "item-7");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("strict values drop every capability and forbid privilege escalation", "[local]") {
  SandboxSpec s = parse_sandbox_values(fixture("values_strict_gvisor.json"));
  CHECK(s.runtime_class == "gvisor");
  CHECK(s.drop_all);
  CHECK(s.capabilities.empty());
  CHECK(s.no_new_privileges);
  CHECK(s.seccomp == "RuntimeDefault");
  CHECK_FALSE(s.read_only_root);
  CHECK(s.allow_domains.empty());
  CHECK(s.allow_cidr.empty());
}

TEST_CASE("an absent runtime class is the chart's default, gvisor, never the node's", "[local]") {
  json v =
      json::parse(test::read_text(test::source_dir() + "/tests/fixtures/local/values_standard_runc.json"));
  v["services"]["default"].erase("runtimeClassName");
  CHECK(parse_sandbox_values(v).runtime_class == "gvisor");
  v["services"]["default"]["runtimeClassName"] = "CLUSTER_DEFAULT";
  CHECK(parse_sandbox_values(v).runtime_class.empty());
  v["services"]["default"]["networkIsolated"] = true;
  v["services"]["default"]["resources"] = {{"limits", {{"nvidia.com/gpu", 1}}}};
  SandboxSpec s = parse_sandbox_values(v);
  CHECK(s.network_mode == "none");
  CHECK(s.gpu);
  // cpu and memory are applied (local_service_settings_test.cpp); other resources are refused.
  v["services"]["default"]["resources"]["limits"]["ephemeral-storage"] = "2Gi";
  CHECK_THROWS_WITH(parse_sandbox_values(v),
                    Catch::Contains("resource ephemeral-storage cannot be applied by the local backend"));
  v["services"]["default"].erase("resources");
  v["services"]["default"]["networkMode"] = "none";  // not a key of the chart
  CHECK_THROWS_WITH(parse_sandbox_values(v), Catch::Contains("networkMode"));
}

TEST_CASE("absent security keys take the runtime defaults", "[local]") {
  SandboxSpec s = parse_sandbox_values(fixture("values_standard_runc.json"));
  CHECK(s.runtime_class.empty());
  CHECK(capability_hex(capability_mask(s.capabilities)) == "00000000a80425fb");
  CHECK_FALSE(s.no_new_privileges);
  CHECK(s.seccomp == "RuntimeDefault");
  CHECK(s.uid == 1000);
  CHECK_FALSE(s.run_as_user_set);
}

TEST_CASE("non_root and read_only_root give uid 1000, a read-only root and tmpfs scratch", "[local]") {
  SandboxSpec s = parse_sandbox_values(fixture("values_non_root_read_only.json"));
  CHECK(s.uid == 1000);
  CHECK(s.run_as_user_set);
  CHECK(s.run_as_non_root);
  CHECK(s.read_only_root);
  REQUIRE(s.scratch.size() == 2);
  CHECK(s.scratch[0].path == "/tmp");
  CHECK(s.scratch[1].path == "/home/agent");
}

TEST_CASE("capability drop and add lists are applied to the default set", "[local]") {
  json v = fixture("values_standard_runc.json");
  v["services"]["default"]["securityContext"] = {
      {"capabilities", {{"drop", {"NET_RAW", "CAP_MKNOD"}}, {"add", {"SYS_PTRACE"}}}}};
  SandboxSpec s = parse_sandbox_values(v);
  std::uint64_t mask = capability_mask(s.capabilities);
  CHECK_FALSE(mask & (1ULL << 13));  // NET_RAW
  CHECK_FALSE(mask & (1ULL << 27));  // MKNOD
  CHECK(mask & (1ULL << 19));        // SYS_PTRACE
  CHECK(mask & (1ULL << 0));         // CHOWN kept
}

TEST_CASE("controls the local backend cannot apply are refused by name", "[local]") {
  json v = fixture("values_strict_gvisor.json");
  SECTION("an unknown securityContext key") {
    v["services"]["default"]["securityContext"]["appArmorProfile"] = {{"type", "RuntimeDefault"}};
    CHECK_THAT(infra_message(v), Catch::Contains("values.services.default.securityContext.appArmorProfile") &&
                                     Catch::Contains("item-7"));
  }
  SECTION("privileged") {
    v["services"]["default"]["securityContext"]["privileged"] = true;
    CHECK_THAT(infra_message(v), Catch::Contains("privileged"));
  }
  SECTION("a Localhost seccomp profile") {
    v["services"]["default"]["securityContext"]["seccompProfile"]["type"] = "Localhost";
    CHECK_THAT(infra_message(v), Catch::Contains("seccompProfile.type"));
  }
  SECTION("an IPv6 range") {
    v["allowCIDR"] = {"2001:db8::/32"};
    CHECK_THAT(infra_message(v), Catch::Contains("2001:db8::/32"));
  }
  SECTION("a hostPath volume outside the host-path root") {
    v["services"]["default"]["volumes"] = {{{"name", "h"}, {"hostPath", {{"path", "/"}}}}};
    CHECK_THAT(infra_message(v), Catch::Contains("only under /var/lib/isoharness/host-paths"));
  }
  SECTION("scratch over /usr") {
    v["services"]["default"]["volumes"] = {{{"name", "t"}, {"emptyDir", json::object()}}};
    v["services"]["default"]["volumeMounts"] = {{{"name", "t"}, {"mountPath", "/usr/lib"}}};
    CHECK_THAT(infra_message(v), Catch::Contains("/usr/lib"));
  }
  SECTION("runAsNonRoot with uid 0") {
    v["services"]["default"]["securityContext"]["runAsNonRoot"] = true;
    v["services"]["default"]["securityContext"]["runAsUser"] = 0;
    CHECK_THAT(infra_message(v), Catch::Contains("kubelet refuses"));
  }
}

TEST_CASE("malformed values are bad input naming every offending key", "[local]") {
  json v = fixture("values_strict_gvisor.json");
  v["services"]["default"]["securityContext"]["runAsUser"] = "root";
  v["services"]["default"]["securityContext"]["readOnlyRootFilesystem"] = "yes";
  v["allowDomains"] = "target.example.com";
  std::string msg = user_message(v);
  CHECK_THAT(msg, Catch::Contains("securityContext.runAsUser"));
  CHECK_THAT(msg, Catch::Contains("readOnlyRootFilesystem"));
  CHECK_THAT(msg, Catch::Contains("allowDomains"));
  CHECK_THAT(user_message(json::array()), Catch::Contains("must be a mapping"));
  CHECK_THAT(user_message(json{{"services", json::object()}}), Catch::Contains("default"));
}

TEST_CASE("the runtime comes from the profile's handlers and never falls back", "[local]") {
  LocalProfile p = parse_local_profile(default_local_profile());
  CHECK(runtime_for(parse_sandbox_values(fixture("values_strict_gvisor.json")), p) == OciRuntime::runsc);
  CHECK(runtime_for(parse_sandbox_values(fixture("values_standard_runc.json")), p) == OciRuntime::runc);
  json v = fixture("values_strict_gvisor.json");
  v["services"]["default"]["runtimeClassName"] = "kata";
  try {
    runtime_for(parse_sandbox_values(v), p);
    FAIL("a class without a handler must be refused");
  } catch (const InfraError& e) {
    CHECK_THAT(e.what(), Catch::Contains("kata") && Catch::Contains("never run under runc"));
  }
}

TEST_CASE("the deployment profile's node classes are read and checked", "[local]") {
  LocalProfile p = parse_local_profile(default_local_profile());
  REQUIRE(p.node_classes.count("tier"));
  CHECK(p.node_classes["tier"].cpuset == "1");
  CHECK_FALSE(p.node_classes["tier"].noisy_neighbour);
  CHECK(p.node_classes["non-tier"].noisy_neighbour);
  json bad = default_local_profile();
  bad["node_classes"]["tier"]["cpuset"] = "1; rm -rf /";
  bad["runtime_handlers"]["gvisor"] = "kata-runtime";
  try {
    parse_local_profile(bad);
    FAIL("a bad profile must be refused");
  } catch (const UserError& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("node_classes.tier.cpuset") && Catch::Contains("runtime_handlers.gvisor"));
  }
}

TEST_CASE("capability names, masks and the containerd default set", "[local]") {
  CHECK(capability_number("CAP_SYS_ADMIN") == 21);
  CHECK(capability_number("SYS_ADMIN") == 21);
  CHECK_FALSE(capability_number("CAP_NOPE").has_value());
  CHECK(capability_hex(capability_mask(containerd_default_capabilities())) == "00000000a80425fb");
  CHECK(capability_hex(0) == "0000000000000000");
}

TEST_CASE("seccomp conversion honours arch, capability and kernel conditions", "[local]") {
  json profile = fixture("seccomp_small.json");
  auto names_of = [](const json& converted) {
    std::vector<std::string> out;
    for (const auto& r : converted["syscalls"])
      for (const auto& n : r["names"])
        out.push_back(n.get<std::string>() + ":" + r["action"].get<std::string>());
    return out;
  };
  SeccompTarget no_caps{"amd64", "6.1.0-13-amd64", {}};
  auto strict = convert_seccomp_profile(profile, no_caps);
  REQUIRE(strict);
  CHECK((*strict)["defaultAction"] == "SCMP_ACT_ERRNO");
  CHECK((*strict)["defaultErrnoRet"] == 38);
  CHECK((*strict)["architectures"] == json({"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"}));
  auto n = names_of(*strict);
  CHECK(std::count(n.begin(), n.end(), "arch_prctl:SCMP_ACT_ALLOW") == 1);
  CHECK(std::count(n.begin(), n.end(), "arm_fadvise64_64:SCMP_ACT_ALLOW") == 0);
  CHECK(std::count(n.begin(), n.end(), "chroot:SCMP_ACT_ERRNO") == 1);
  CHECK(std::count(n.begin(), n.end(), "chroot:SCMP_ACT_ALLOW") == 0);
  CHECK(std::count(n.begin(), n.end(), "bpf:SCMP_ACT_ALLOW") == 0);
  // containerd's rule: without CAP_SYS_ADMIN no namespaces — clone3 reads as ENOSYS,
  // clone is allowed only without CLONE_NEW* flags.
  CHECK(std::count(n.begin(), n.end(), "clone3:SCMP_ACT_ALLOW") == 0);
  CHECK(std::count(n.begin(), n.end(), "clone3:SCMP_ACT_ERRNO") == 1);
  const json& clone_rule = (*strict)["syscalls"][(*strict)["syscalls"].size() - 2];
  CHECK(clone_rule["names"] == json({"clone"}));
  CHECK(clone_rule["args"][0]["op"] == "SCMP_CMP_MASKED_EQ");
  CHECK(clone_rule["args"][0]["value"] == 0x7E020000UL);
  CHECK(std::count(n.begin(), n.end(), "futuristic:SCMP_ACT_ALLOW") == 0);
  SeccompTarget admin{"amd64", "6.1.0", {"CAP_SYS_ADMIN"}};
  auto with_admin = convert_seccomp_profile(profile, admin);
  REQUIRE(with_admin);
  auto na = names_of(*with_admin);
  CHECK(std::count(na.begin(), na.end(), "clone3:SCMP_ACT_ALLOW") == 1);
  CHECK(std::count(na.begin(), na.end(), "clone3:SCMP_ACT_ERRNO") == 0);
  const json& personality = (*strict)["syscalls"][1];
  CHECK(personality["args"][0]["value"] == 8);
  CHECK(personality["args"][0]["op"] == "SCMP_CMP_EQ");

  SeccompTarget with_chroot{"amd64", "6.1.0", {"CAP_SYS_CHROOT"}};
  auto standard = convert_seccomp_profile(profile, with_chroot);
  REQUIRE(standard);
  n = names_of(*standard);
  CHECK(std::count(n.begin(), n.end(), "chroot:SCMP_ACT_ALLOW") == 1);
  CHECK(std::count(n.begin(), n.end(), "chroot:SCMP_ACT_ERRNO") == 0);

  SeccompTarget arm{"arm64", "", {}};
  auto a = convert_seccomp_profile(profile, arm);
  REQUIRE(a);
  n = names_of(*a);
  CHECK(std::count(n.begin(), n.end(), "arm_fadvise64_64:SCMP_ACT_ALLOW") == 1);
  CHECK(std::count(n.begin(), n.end(), "futuristic:SCMP_ACT_ALLOW") == 1);  // kernel unknown: not filtered
}

TEST_CASE("seccomp conversion refuses a profile of the wrong shape", "[local]") {
  SeccompTarget t;
  CHECK_FALSE(convert_seccomp_profile(json::array(), t));
  CHECK_FALSE(convert_seccomp_profile(json{{"defaultAction", "SCMP_ACT_ERRNO"}}, t));
  json no_arch = {
      {"defaultAction", "SCMP_ACT_ERRNO"}, {"syscalls", json::array()}, {"archMap", json::array()}};
  auto r = convert_seccomp_profile(no_arch, t);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("SCMP_ARCH_X86_64"));
  json bad_rule = fixture("seccomp_small.json");
  bad_rule["syscalls"][0].erase("action");
  auto r2 = convert_seccomp_profile(bad_rule, t);
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.error().message, Catch::Contains("syscalls[0]"));
  CHECK_FALSE(load_default_seccomp("/nonexistent/seccomp.json", t));
}

TEST_CASE("Debian's maintained default profile converts", "[local]") {
  auto r = load_default_seccomp(kContainersSeccompPath,
                                SeccompTarget{"amd64", "6.1.0", containerd_default_capabilities()});
  INFO((r ? "" : r.error().message));
  REQUIRE(r);
  CHECK((*r)["syscalls"].size() > 10);
  CHECK(kernel_at_least("6.1.0-13-amd64", "5.8"));
  CHECK_FALSE(kernel_at_least("4.19.0", "5.8"));
  CHECK(kernel_at_least("5.10", "5.8"));
}

TEST_CASE("the OCI config carries every control of the values", "[local]") {
  BundleInputs in;
  in.runtime = OciRuntime::runc;
  in.hostname = "sb1";
  in.netns_path = "/var/run/netns/ih-x-s-sb1";
  in.cgroups_path = "/ih-x-sb1";
  in.cpuset = "1";
  in.args = {"/usr/sbin/sshd", "-D"};
  in.seccomp = json{{"defaultAction", "SCMP_ACT_ERRNO"}, {"syscalls", json::array()}};

  SECTION("strict under runc") {
    json c = make_oci_config(parse_sandbox_values(fixture("values_strict_gvisor.json")), in);
    CHECK(c["process"]["capabilities"]["bounding"].empty());
    CHECK(c["process"]["capabilities"]["ambient"].empty());
    CHECK(c["process"]["noNewPrivileges"] == true);
    CHECK(c["process"]["user"]["uid"] == 1000);
    CHECK(c["root"]["readonly"] == false);
    CHECK(c["hostname"] == "sb1");
    CHECK(c["linux"]["seccomp"]["defaultAction"] == "SCMP_ACT_ERRNO");
    CHECK(c["linux"]["resources"]["cpu"]["cpus"] == "1");
    CHECK(c["linux"]["maskedPaths"] == json(containerd_masked_paths()));
    CHECK(c["linux"]["readonlyPaths"] == json(containerd_readonly_paths()));
    bool joined = false;
    for (const auto& ns : c["linux"]["namespaces"])
      if (ns["type"] == "network") joined = ns["path"] == in.netns_path;
    CHECK(joined);
  }
  SECTION("runsc gets no network namespace (it runs --network=host inside one)") {
    in.runtime = OciRuntime::runsc;
    json c = make_oci_config(parse_sandbox_values(fixture("values_strict_gvisor.json")), in);
    for (const auto& ns : c["linux"]["namespaces"]) CHECK(ns["type"] != "network");
  }
  SECTION("standard keeps the default set in every capability list") {
    json c = make_oci_config(parse_sandbox_values(fixture("values_standard_runc.json")), in);
    CHECK(c["process"]["capabilities"]["effective"] == json(containerd_default_capabilities()));
    CHECK(c["process"]["capabilities"]["ambient"] == json(containerd_default_capabilities()));
    CHECK(c["process"]["noNewPrivileges"] == false);
  }
  SECTION("read-only root with tmpfs scratch owned by the user") {
    json c = make_oci_config(parse_sandbox_values(fixture("values_non_root_read_only.json")), in);
    CHECK(c["root"]["readonly"] == true);
    int found = 0;
    for (const auto& m : c["mounts"]) {
      if (m["destination"] == "/tmp") {
        ++found;
        CHECK(m["type"] == "tmpfs");
        CHECK(std::find(m["options"].begin(), m["options"].end(), "mode=1777") != m["options"].end());
      }
      if (m["destination"] == "/home/agent") {
        ++found;
        CHECK(std::find(m["options"].begin(), m["options"].end(), "uid=1000") != m["options"].end());
      }
      if (m["destination"] == "/usr" || m["destination"] == "/etc/alternatives") {
        ++found;
        CHECK(m["type"] == "bind");
        CHECK(std::find(m["options"].begin(), m["options"].end(), "ro") != m["options"].end());
      }
    }
    CHECK(found == 4);
  }
  SECTION("a host without /etc/alternatives binds none") {
    in.host_alternatives.clear();
    json c = make_oci_config(parse_sandbox_values(fixture("values_standard_runc.json")), in);
    for (const auto& m : c["mounts"]) CHECK(m["destination"] != "/etc/alternatives");
  }
  SECTION("Unconfined leaves seccomp out") {
    in.seccomp = nullptr;
    json c = make_oci_config(parse_sandbox_values(fixture("values_standard_runc.json")), in);
    CHECK_FALSE(c["linux"].contains("seccomp"));
  }
}

TEST_CASE("no container id is the start of another (runsc resolves ids as prefixes)", "[local]") {
  const std::vector<std::string> names = {"s1", "s10", "s1-scorer", "s1-helper", "s11", "jumphost"};
  for (const auto& a : names)
    for (const auto& b : names) {
      if (a == b) continue;
      INFO(a << " / " << b);
      CHECK(container_id("abc123", b).rfind(container_id("abc123", a), 0) != 0);
    }
  CHECK(container_id("abc123", "s1").rfind("ih-abc123-", 0) == 0);  // what cleanup sweeps for
}
