#include "harness/verify/verify.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "tests/unit/policy_test_util.h"
#include "tests/unit/posture_fixture.h"

using namespace isoharness;
using nlohmann::json;

namespace {

// A posture as isoprobe reports it from a strict sandbox; `gvisor` flips the runtime.
json posture(bool gvisor, const std::string& cap_eff = "0000000000000000") {
  return test::clean_posture(gvisor, cap_eff);
}

// Expect blocks as the policy engine writes them: verify is tested against the plan it
// enforces, never against a hand-written copy of it.
json plan_expect(const std::string& isolation, const std::string& facts = "") {
  std::string y =
      "eval_set:\n  isolation: " + isolation + "\n  tasks:\n    - name: t\n      items:\n        - name: i\n";
  auto plan = test::plan_yaml(y + facts);
  REQUIRE(plan.accepted());
  return plan.items[0].expect;
}

// strict with a non-root user and a read-only root (the posture above): under gVisor, or
// on the host kernel (a GPU service keeps the node's runtime).
json strict_expect(bool gvisor) {
  const std::string isolation = "{level: strict, non_root: true, read_only_root: true}";
  return gvisor
             ? plan_expect(isolation)
             : plan_expect(isolation, "sandboxes: [{task: 0, item: 0, services: {default: {gpu: true}}}]\n");
}

verify::HostFacts host() {
  verify::HostFacts h;
  h.boot_id = "host-boot-id";
  h.hostname = "vm";
  h.pid1 = "init";
  h.process_count = 120;
  h.interfaces = {"lo", "eth0", "docker0"};
  return h;
}

std::vector<deploy::EgressTarget> targets() {
  return {{"target", "target.example.com", 80, "http", "target.example.com", "internet"},
          {"metadata", "169.254.169.254", 80, "http", "", "metadata"},
          {"cidr-host", "198.51.100.10", 80, "tcp", "", "internet"},
          {"dns", "target.example.com", 53, "dns", "target.example.com", "resolver"}};
}

const verify::CheckResult& find(const std::vector<verify::CheckResult>& checks, const std::string& control) {
  for (const auto& c : checks)
    if (c.control == control) return c;
  FAIL("no check named " << control);
  throw std::logic_error("unreachable");
}

std::vector<std::string> failures(const std::vector<verify::CheckResult>& checks) {
  std::vector<std::string> out;
  for (const auto& c : checks)
    if (c.status == isoharness::CheckStatus::fail) out.push_back(c.control + ": " + c.reason);
  return out;
}

std::vector<verify::CheckResult> run(const json& expect, const json& p,
                                     policy::Level level = policy::Level::strict) {
  auto h = host();
  auto t = targets();
  // Judged as a deployment that declares no witness (`witness: none`) and no node view
  // (`node_view: none`): these cases are about reading the sandbox's report;
  // verify_witness_test.cpp covers the witnesses, verify_node_test.cpp the node's view.
  return verify::verify_sandbox({expect, p, h, t, level, nullptr, true, nullptr, true});
}

}  // namespace

TEST_CASE("strict under gVisor passes, with emulated interfaces excused", "[verify]") {
  auto checks = run(strict_expect(true), posture(true));
  CHECK(failures(checks).empty());
  CHECK(find(checks, "user_namespace").reason.find("emulated") != std::string::npos);
  CHECK(find(checks, "sysrq").reason.find("emulated") != std::string::npos);
  CHECK(find(checks, "seccomp").reason.find("emulated") != std::string::npos);
}

TEST_CASE("the same emulated interfaces on the host kernel fail", "[verify]") {
  json p = posture(false);
  for (auto& o : p["observations"]) {
    if (o["name"] == "userns") o["value"]["created"] = true;
    if (o["name"] == "sysrq") o["value"]["opens_for_write"] = true;
    if (o["name"] == "seccomp") o["value"]["status_mode"] = 0;
  }
  auto checks = run(strict_expect(false), p);
  CHECK(find(checks, "user_namespace").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "sysrq").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "seccomp").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "kernel").status == isoharness::CheckStatus::pass);
}

TEST_CASE("runc behind the plan's back fails the kernel check and gets no excuses", "[verify]") {
  json p = posture(false);
  for (auto& o : p["observations"])
    if (o["name"] == "sysrq") o["value"]["opens_for_write"] = true;
  auto checks = run(strict_expect(true), p);
  CHECK(find(checks, "kernel").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "kernel").reason.find("host") != std::string::npos);
  CHECK(find(checks, "sysrq").status == isoharness::CheckStatus::fail);
}

TEST_CASE("a gVisor claim with the host's boot id is the host kernel", "[verify]") {
  json p = posture(true);
  for (auto& o : p["observations"])
    if (o["name"] == "boot_id") o["value"]["boot_id"] = "host-boot-id";
  CHECK(find(run(strict_expect(true), p), "kernel").status == isoharness::CheckStatus::fail);
}

TEST_CASE("a kept CAP_SYS_ADMIN fails capabilities, naming it", "[verify]") {
  // 0x200000 = bit 21, CAP_SYS_ADMIN
  auto checks = run(strict_expect(true), posture(true, "0000000000200000"));
  CHECK(find(checks, "capabilities").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "capabilities").reason.find("CAP_SYS_ADMIN") != std::string::npos);
  CHECK(find(checks, "capability:CAP_SYS_ADMIN").status == isoharness::CheckStatus::fail);
}

TEST_CASE("the bounding set shows what a non-root login hides", "[verify]") {
  // A uid-1000 login: CapEff empty, but the container was granted CAP_SYS_ADMIN.
  json p = posture(false);
  for (auto& o : p["observations"])
    if (o["name"] == "capabilities") o["value"]["bnd"] = "0000000000200000";
  auto checks = run(strict_expect(false), p);
  CHECK(find(checks, "capabilities").status == isoharness::CheckStatus::pass);  // nothing effective
  CHECK(find(checks, "capability_bounding").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "capability_bounding").reason.find("CAP_SYS_ADMIN") != std::string::npos);
  CHECK(find(checks, "capability:CAP_SYS_ADMIN").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "capability:CAP_SYS_ADMIN").observed == "in the bounding set");
  // The planned set itself, or fewer, passes.
  CHECK(find(run(strict_expect(false), posture(false)), "capability_bounding").status ==
        isoharness::CheckStatus::pass);
  json e = strict_expect(false);
  e["cap_eff"] = nullptr;
  json q = posture(false, "00000000a80425fb");
  CHECK(find(run(e, q), "capability_bounding").status == isoharness::CheckStatus::pass);
  for (auto& o : q["observations"])
    if (o["name"] == "capabilities") o["value"]["bnd"] = "garbage";
  CHECK(find(run(e, q), "capability_bounding").status == isoharness::CheckStatus::fail);
}

TEST_CASE("a null cap_eff means the planned runtime's default set", "[verify]") {
  json e = strict_expect(false);
  e["cap_eff"] = nullptr;
  CHECK(find(run(e, posture(false, "00000000a80425fb")), "capabilities").status ==
        isoharness::CheckStatus::pass);
  // Fewer than the default set (a non-root login) is stricter: it passes; more fails.
  CHECK(find(run(e, posture(false, "00000000a80405fb")), "capabilities").status ==
        isoharness::CheckStatus::pass);
  CHECK(find(run(e, posture(false, "00000000a82425fb")), "capabilities").status ==
        isoharness::CheckStatus::fail);
  json g = strict_expect(true);
  g["cap_eff"] = nullptr;
  CHECK(find(run(g, posture(true, "00000000a80405fb")), "capabilities").status ==
        isoharness::CheckStatus::pass);
}

TEST_CASE("no_new_privs, uid, read-only root and scratch follow the plan", "[verify]") {
  json p = posture(false);
  for (auto& o : p["observations"]) {
    if (o["name"] == "no_new_privs") o["value"] = false;
    if (o["name"] == "identity") o["value"]["uid"] = 0;
    if (o["name"] == "filesystem") {
      o["value"]["root_writable"] = true;
      o["value"]["readonly_mounts"] = {"/usr"};
      o["value"]["paths"]["/tmp"] = false;
    }
  }
  auto checks = run(strict_expect(false), p);
  CHECK(find(checks, "no_new_privs").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "uid").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "root_filesystem").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "root_not_writable").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "scratch:/tmp").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "scratch:/home/agent").status == isoharness::CheckStatus::pass);
  // And positively: the standard plan leaves uid to the image.
  json std_expect = plan_expect("standard");
  json sp = posture(false, "00000000a80425fb");
  for (auto& o : sp["observations"]) {
    if (o["name"] == "no_new_privs") o["value"] = false;
    // uid 1000 cannot create files in a root-owned "/" on a writable mount: not read-only.
    if (o["name"] == "filesystem") o["value"]["readonly_mounts"] = {"/usr"};
  }
  auto std_checks = run(std_expect, sp, policy::Level::standard);
  CHECK(find(std_checks, "uid").status == isoharness::CheckStatus::na);
  CHECK(find(std_checks, "no_new_privs").status == isoharness::CheckStatus::pass);
  CHECK(find(std_checks, "root_filesystem").status == isoharness::CheckStatus::pass);
}

TEST_CASE("egress: strict blocks everything; named targets open exactly", "[verify]") {
  CHECK(failures(run(strict_expect(true), posture(true))).empty());

  json p = posture(true);
  for (auto& o : p["observations"])
    if (o["name"] == "egress") o["value"]["targets"][1]["result"] = "connected";  // metadata
  auto leaked = run(strict_expect(true), p);
  CHECK(find(leaked, "egress:metadata").status == isoharness::CheckStatus::fail);
  CHECK(find(leaked, "egress:metadata").reason.find("metadata") != std::string::npos);

  json e = plan_expect(
      "{level: strict, non_root: true, read_only_root: true, allow_domains: [target.example.com], "
      "allow_cidr: [198.51.100.0/24]}");
  json open = posture(true);
  for (auto& o : open["observations"])
    if (o["name"] == "egress")
      o["value"]["targets"] = {{{"name", "target"}, {"result", "connected"}},
                               {{"name", "metadata"}, {"result", "timeout"}},
                               {{"name", "cidr-host"}, {"result", "connected"}},
                               {{"name", "dns"}, {"result", "connected"}}};
  CHECK(failures(run(e, open)).empty());

  // A named target that does not answer is a failure too: the hole the config asks for is missing.
  for (auto& o : open["observations"])
    if (o["name"] == "egress") o["value"]["targets"][0]["result"] = "timeout";
  CHECK(find(run(e, open), "egress:target").status == isoharness::CheckStatus::fail);
}

TEST_CASE("egress: the plan's allow lists are scoped by port, protocol and the name presented", "[verify]") {
  json e = plan_expect(
      "{level: strict, non_root: true, read_only_root: true, allow_domains: [target.example.com], "
      "allow_cidr: [198.51.100.0/24]}");
  const std::vector<deploy::EgressTarget> scoped = {
      {"target-port-22", "target.example.com", 22, "tcp", "target.example.com", "internet"},
      {"target-udp", "203.0.113.10", 53, "udp", "target.example.com", "internet"},
      {"target-sni", "target.example.com", 443, "tls", "target.example.com", "internet"},
      {"target-sni-fronted", "target.example.com", 443, "tls", "fronted.isoharness.invalid", "internet", "",
       "fronted.isoharness.invalid"},
      {"cidr-host-port", "198.51.100.10", 8443, "tcp", "", "internet"},
      {"metadata-google", "169.254.169.254", 80, "http-google", "", "metadata"}};
  auto judge = [&](const json& expect, const std::string& name, const std::string& result) {
    json p = posture(true);
    for (auto& o : p["observations"])
      if (o["name"] == "egress") o["value"]["targets"] = {{{"name", name}, {"result", result}}};
    auto h = host();
    // The plan's scope alone, on the sandbox's word (witness: none): the witnesses' rule has
    // its own tests (verify_witness_test, egress_verdict_test).
    for (const auto& c :
         verify::verify_sandbox({expect, p, h, scoped, policy::Level::strict, nullptr, true, nullptr, true}))
      if (c.control == "egress:" + name) return c;
    FAIL("no check for " << name);
    throw std::logic_error("unreachable");
  };
  using S = isoharness::CheckStatus;
  // The listed domain is reachable on 443 under its own name only; port 22 and UDP are holes.
  CHECK(judge(e, "target-sni", "connected").status == S::pass);
  CHECK(judge(e, "target-port-22", "connected").status == S::fail);
  CHECK(judge(e, "target-port-22", "timeout").status == S::pass);
  CHECK(judge(e, "target-udp", "connected").status == S::fail);
  const auto fronted = judge(e, "target-sni-fronted", "connected");
  CHECK(fronted.status == S::fail);
  CHECK(fronted.reason.find("fronted.isoharness.invalid") != std::string::npos);
  CHECK(judge(e, "target-sni-fronted", "reset").status == S::pass);
  // The CIDR is open on every port: an unanswered 8443 is a missing hole.
  CHECK(judge(e, "cidr-host-port", "connected").status == S::pass);
  CHECK(judge(e, "cidr-host-port", "timeout").status == S::fail);
  // Metadata: the chart keeps it out of a named item; under world egress only the node does.
  CHECK(judge(e, "metadata-google", "timeout").reason.find("the chart opens no way") != std::string::npos);
  json world = plan_expect("{level: standard, allow_domains: ['*']}");
  const auto meta = judge(world, "metadata-google", "timeout");
  CHECK(meta.status == S::pass);
  CHECK(meta.reason.find("a node setting (not the chart) must block it") != std::string::npos);
  CHECK(judge(world, "metadata-google", "connected").status == S::fail);
}

TEST_CASE("gVisor's own devices are emulated, the same names on the host kernel are not", "[verify]") {
  json g = posture(true);
  for (auto& o : g["observations"])
    if (o["name"] == "devices") o["value"]["extra"] = {"fuse"};
  CHECK(find(run(strict_expect(true), g), "host_devices").status == isoharness::CheckStatus::pass);
  json h = posture(false);
  for (auto& o : h["observations"])
    if (o["name"] == "devices") o["value"]["extra"] = {"fuse"};
  CHECK(find(run(strict_expect(false), h), "host_devices").status == isoharness::CheckStatus::fail);
}

TEST_CASE("host evidence: runtime sockets, devices, host namespaces", "[verify]") {
  json p = posture(false);
  for (auto& o : p["observations"]) {
    if (o["name"] == "runtime_sockets") o["value"]["found"] = {"/run/containerd/containerd.sock"};
    if (o["name"] == "devices") o["value"]["extra"] = {"/dev/kvm"};
    if (o["name"] == "processes") o["value"] = {{"visible", 118}, {"pid1", "init"}};
    if (o["name"] == "network") o["value"] = {{"interfaces", {"lo", "eth0", "docker0"}}, {"hostname", "vm"}};
  }
  auto checks = run(strict_expect(false), p);
  CHECK(find(checks, "runtime_socket").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "host_devices").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "pid_namespace").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "host_namespaces").status == isoharness::CheckStatus::fail);
}

TEST_CASE("missing or hostile observations fail, never pass", "[verify]") {
  json hostile = {{"schema", "isoharness.posture/v1"},
                  {"observations",
                   {{{"name", "kernel"}, {"status", "error"}, {"errno", 1}},
                    42,
                    {{"name", "capabilities"}, {"status", "ok"}, {"value", {{"eff", "zzzz"}}}},
                    {{"name", "no_new_privs"}, {"status", "ok"}, {"value", "yes"}}}}};
  auto checks = run(strict_expect(true), hostile);
  CHECK(find(checks, "kernel").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "capabilities").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "no_new_privs").status == isoharness::CheckStatus::fail);
  CHECK(find(checks, "egress:target").status == isoharness::CheckStatus::fail);
  for (const auto& c : checks) CHECK(c.status != isoharness::CheckStatus::pass);
  CHECK_FALSE(run(strict_expect(true), json("not an object")).empty());
}

TEST_CASE("the plan writes exactly the expect keys verify reads", "[verify]") {
  const auto read = verify::expect_keys_read();
  const std::set<std::string> keys(read.begin(), read.end());
  CHECK(keys.size() == read.size());
  for (const json& e : {strict_expect(true), strict_expect(false), plan_expect("standard"),
                        plan_expect("{runtime_class: gvisor}"),
                        plan_expect("{level: standard, allow_domains: [target.example.com]}")}) {
    std::set<std::string> written;
    for (const auto& [k, v] : e.items()) written.insert(k);
    for (const auto& k : written) {
      INFO("the plan writes '" << k << "': a check must read it");
      CHECK(keys.count(k) == 1);
    }
    for (const auto& k : keys) {
      INFO("a check reads '" << k << "': the plan must write it");
      CHECK(written.count(k) == 1);
    }
  }
}

TEST_CASE("a plan without one of the keys fails the check that reads it", "[verify]") {
  REQUIRE(failures(run(strict_expect(true), posture(true))).empty());
  // strict names its capability set; a runtime class alone leaves it to cap_eff_default.
  const json plans[] = {strict_expect(true), plan_expect("{runtime_class: gvisor}")};
  for (const auto& key : verify::expect_keys_read()) {
    bool named = false;
    for (json e : plans) {
      e.erase(key);
      for (const auto& f : failures(run(e, posture(true, "00000000a80405fb"))))
        named = named || f.find("has no '" + key + "'") != std::string::npos;
    }
    INFO("no check failed for the missing key '" << key << "'");
    CHECK(named);
  }
}

// The reference's "What gVisor actually changes": what each runtime shows is what the plan
// for that runtime accepts, and gVisor's open interfaces pass only because gVisor is seen.
TEST_CASE("reference: what gVisor actually changes", "[verify]") {
  auto set_obs = [](json& p, const std::string& name, const json& value) {
    test::posture_value(p, name) = value;
  };
  // runc: kallsyms populated (symbols listed, addresses zeroed without CAP_SYSLOG),
  // /sys/kernel/debug present (an empty mount point), the runtime's default set.
  const json writable_root = {{"root_writable", true},
                              {"readonly_mounts", json::array()},
                              {"paths", {{"/tmp", true}, {"/home/agent", true}}},
                              {"cgroup_writable", false}};
  json runc = posture(false, "00000000a80425fb");
  set_obs(runc, "kallsyms", {{"state", "zeroed"}, {"lines", 90000}});
  set_obs(runc, "debugfs", {{"present", true}, {"entries", 0}});
  set_obs(runc, "no_new_privs", false);
  set_obs(runc, "filesystem", writable_root);
  set_obs(runc, "identity", {{"uid", 0}});
  CHECK(failures(run(plan_expect("standard"), runc, policy::Level::standard)).empty());

  // gVisor, named as a runtime class: kallsyms empty, debugfs absent, CapEff 00000000a80405fb;
  // a user namespace can be created, sysrq-trigger is writable, Seccomp reads 0.
  json gvisor = posture(true, "00000000a80405fb");
  set_obs(gvisor, "userns", {{"created", true}});
  set_obs(gvisor, "sysrq", {{"present", true}, {"opens_for_write", true}});
  set_obs(gvisor, "no_new_privs", false);
  set_obs(gvisor, "filesystem", writable_root);
  set_obs(gvisor, "identity", {{"uid", 0}});
  auto checks = run(plan_expect("{runtime_class: gvisor}"), gvisor, policy::Level::standard);
  CHECK(failures(checks).empty());
  for (const char* emulated : {"user_namespace", "sysrq", "seccomp"})
    CHECK(find(checks, emulated).reason.find("emulated") != std::string::npos);
  // strict under gVisor: the same boundary, and no capability at all.
  CHECK(find(run(strict_expect(true), gvisor), "capabilities").status == isoharness::CheckStatus::fail);
  // The host kernel showing what gVisor shows: every one of those interfaces fails.
  json host = posture(false);
  set_obs(host, "userns", {{"created", true}});
  set_obs(host, "sysrq", {{"present", true}, {"opens_for_write", true}});
  set_obs(host, "seccomp", {{"status_mode", 0}, {"prctl_mode", 0}});
  set_obs(host, "kallsyms", {{"state", "populated"}, {"lines", 90000}});
  set_obs(host, "debugfs", {{"present", true}, {"entries", 40}});
  auto leaky = run(strict_expect(false), host);
  for (const char* control : {"user_namespace", "sysrq", "seccomp", "kallsyms", "debugfs"})
    CHECK(find(leaky, control).status == isoharness::CheckStatus::fail);
}

TEST_CASE("debugfs mounted fails even when this user cannot list it", "[verify]") {
  // Found by `isoharness selftest` (debugfs_mounted): as uid 1000 the mount reads EACCES.
  json p = posture(false);
  for (auto& o : p["observations"])
    if (o["name"] == "debugfs") o["value"] = {{"present", true}, {"entries", 0}, {"debugfs_mounted", true}};
  CHECK(find(run(strict_expect(false), p), "debugfs").status == isoharness::CheckStatus::fail);
  for (auto& o : p["observations"])
    if (o["name"] == "debugfs") o["value"] = {{"present", true}, {"entries", 0}, {"debugfs_mounted", false}};
  CHECK(find(run(strict_expect(false), p), "debugfs").status == isoharness::CheckStatus::pass);
}

TEST_CASE("the host's PID 1 is read as the processes probe reports it: its command line", "[verify]") {
  // Found by `isoharness selftest` (host_pid_namespace): comm never equals a command line.
  std::ifstream in("/proc/1/cmdline", std::ios::binary);
  std::string first;
  std::getline(in, first, '\0');
  auto facts = verify::read_host_facts();
  if (first.empty()) {
    CHECK(facts.pid1.front() == '[');
  } else {
    CHECK(facts.pid1.rfind(first, 0) == 0);
  }
}
