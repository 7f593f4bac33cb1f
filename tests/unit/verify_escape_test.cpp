// verify's checks of the escape classes: host path mounts beyond the plan, /proc/sys and
// cgroup mounts, bpf(2), the capabilities' class names, and the runtime's version against
// runc's fixed escapes. Each failure must name its class.
#include <catch2/catch.hpp>

#include "harness/verify/verify.h"
#include "tests/unit/policy_test_util.h"

using namespace isoharness;
using nlohmann::json;

namespace {

json esc_obs(const std::string& name, json value) {
  return {{"name", name}, {"status", "ok"}, {"value", std::move(value)}, {"errno", 0}, {"evidence", "ev"}};
}

json esc_expect_for(const std::string& isolation, const std::string& facts = "") {
  std::string y =
      "eval_set:\n  isolation: " + isolation + "\n  tasks:\n    - name: t\n      items:\n        - name: i\n";
  auto plan = test::plan_yaml(y + facts);
  REQUIRE(plan.accepted());
  return plan.items[0].expect;
}

// The host kernel (a GPU service keeps the node's runtime), strict.
json esc_host_strict() {
  return esc_expect_for("{level: strict}",
                        "sandboxes: [{task: 0, item: 0, services: {default: {gpu: true}}}]\n");
}

json esc_escape_mounts(json host_mounts, bool proc_sys_ro, json cgroup_rw) {
  return esc_obs("escape_mounts", {{"host_mounts", std::move(host_mounts)},
                                   {"proc_sys_read_only", proc_sys_ro},
                                   {"cgroup_writable_mounts", std::move(cgroup_rw)},
                                   {"release_agent_visible", true},
                                   {"release_agent_writable", false}});
}

json esc_posture(json mounts, bool map_created = false, bool gvisor = false) {
  return {
      {"schema", "isoharness.posture/v1"},
      {"observations",
       {esc_obs("kernel", {{"gvisor", gvisor}, {"gvisor_signals", gvisor ? json{"a", "b"} : json::array()}}),
        std::move(mounts),
        esc_obs("bpf", {{"unprivileged_bpf_disabled", 2},
                        {"map_created", map_created},
                        {"map_errno", map_created ? 0 : 1},
                        {"route_localnet", 0}})}}};
}

verify::CheckResult esc_check(const json& expect, const json& p, const std::string& control) {
  verify::HostFacts h;
  std::vector<deploy::EgressTarget> t;
  for (const auto& c :
       verify::verify_sandbox({expect, p, h, t, policy::Level::strict, nullptr, false, nullptr, true}))
    if (c.control == control) return c;
  FAIL("no check " << control);
  return {};
}

json esc_usr_mount() {
  return {{"mount_point", "/usr"}, {"fstype", "ext4"}, {"root", "/usr"}, {"read_only", true}};
}

}  // namespace

TEST_CASE("a host directory beyond the plan fails host_path_mount, naming the class", "[verify]") {
  const json e = esc_host_strict();
  const json clean = esc_posture(esc_escape_mounts(json::array({esc_usr_mount()}), true, json::array()));
  // The test plan's deployment is the local one: its /usr bind is plumbing the plan expects.
  REQUIRE(e["host_mounts_allowed"].dump().find("\"/usr\"") != std::string::npos);
  CHECK(esc_check(e, clean, "host_path_mount").status == CheckStatus::pass);
  json node = {{"mount_point", "/node-data"}, {"fstype", "ext4"}, {"root", "/srv/x"}, {"read_only", true}};
  const auto c =
      esc_check(e, esc_posture(esc_escape_mounts(json::array({esc_usr_mount(), node}), true, json::array())),
                "host_path_mount");
  CHECK(c.status == CheckStatus::fail);
  CHECK_THAT(c.reason, Catch::Contains("escape class: host path mount") && Catch::Contains("/node-data") &&
                           Catch::Contains("read-only"));
}

TEST_CASE("/proc/sys on a writable mount fails proc_sys on the host kernel, emulated under gVisor",
          "[verify]") {
  const json e = esc_host_strict();
  CHECK(esc_check(e, esc_posture(esc_escape_mounts(json::array(), true, json::array())), "proc_sys").status ==
        CheckStatus::pass);
  const auto c =
      esc_check(e, esc_posture(esc_escape_mounts(json::array(), false, json::array())), "proc_sys");
  CHECK(c.status == CheckStatus::fail);
  CHECK_THAT(c.reason, Catch::Contains("sysctl injection"));
  const json g = esc_expect_for("{level: strict}");
  CHECK(esc_check(g, esc_posture(esc_escape_mounts(json::array(), false, json::array()), false, true),
                  "proc_sys")
            .status == CheckStatus::pass);
}

TEST_CASE("a writable cgroup mount fails cgroup_mounts, naming release_agent", "[verify]") {
  const json e = esc_host_strict();
  CHECK(esc_check(e, esc_posture(esc_escape_mounts(json::array(), true, json::array())), "cgroup_mounts")
            .status == CheckStatus::pass);
  const auto c = esc_check(
      e, esc_posture(esc_escape_mounts(json::array(), true, json::array({"/sys/fs/cgroup/memory"}))),
      "cgroup_mounts");
  CHECK(c.status == CheckStatus::fail);
  CHECK_THAT(c.reason, Catch::Contains("release_agent") && Catch::Contains("/sys/fs/cgroup/memory"));
}

TEST_CASE("a bpf map created fails bpf, naming the eBPF class", "[verify]") {
  const json e = esc_host_strict();
  const json m = esc_escape_mounts(json::array(), true, json::array());
  CHECK(esc_check(e, esc_posture(m, false), "bpf").status == CheckStatus::pass);
  const auto c = esc_check(e, esc_posture(m, true), "bpf");
  CHECK(c.status == CheckStatus::fail);
  CHECK_THAT(c.reason, Catch::Contains("eBPF verifier"));
}

TEST_CASE("a missing escape_mounts observation fails its checks, never passes", "[verify]") {
  json p = esc_posture(esc_escape_mounts(json::array(), true, json::array()));
  p["observations"].erase(1);
  CHECK(esc_check(esc_host_strict(), p, "host_path_mount").status == CheckStatus::fail);
  CHECK(esc_check(esc_host_strict(), p, "proc_sys").status == CheckStatus::fail);
}
