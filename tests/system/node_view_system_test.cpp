// Posture judged from outside through the real run path (docs/CONTRACTS.md §4.8): a
// sandbox that kept CAP_SYS_ADMIN, shares the host's PID namespace and has a writable root,
// judged once with an agent that reports a clean strict posture (the lying agent of
// selftest, harness/selftest/lying_agent.h) and once with the honest probe, and a clean
// sandbox beside them. The lie fails through the node's view, naming both sides; the honest
// report fails as it always did; the clean sandbox passes, every posture check judged by
// the node too.
#include <catch2/catch.hpp>
#include <filesystem>

#include "harness/common/error.h"
#include "harness/runner/matrix.h"
#include "harness/runner/runner.h"
#include "harness/selftest/lying_agent.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using nlohmann::json;

namespace {

const std::vector<std::string> kPrograms = {"runc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip"};

// Selftest's host-kernel item: strict, non_root and read_only_root on the node's runc (its
// GPU service keeps the node's default runtime), the plan every posture weakening is judged
// against.
runner::RunConfig config(const std::string& dir) {
  runner::RunConfig cfg;
  cfg.scenario_paths = {test::source_dir() + "/scenarios/selftest/hardened.yaml"};
  cfg.command.scenarios_dir = test::source_dir() + "/scenarios";
  cfg.command.out_dir = dir + "/out";
  cfg.runtimes = {"runc"};
  cfg.node_classes = {"tier"};
  cfg.attempts = 1;
  cfg.parallel = 1;
  return cfg;
}

void weaken(runner::RunConfig& cfg) {
  cfg.tamper = [](const std::string&, const std::string&, json& values) {
    auto& sc = values["services"]["default"]["securityContext"];
    sc["capabilities"] = {{"drop", json::array()}, {"add", {"SYS_ADMIN"}}};
    sc["readOnlyRootFilesystem"] = false;
  };
  cfg.test_weakenings = {"oci:host-pid"};
}

const json* check_of(const json& sandbox, const std::string& control) {
  for (const auto& c : sandbox["checks"])
    if (c["control"] == control) return &c;
  return nullptr;
}

bool judged_by(const json& check, const char* judge) {
  for (const auto& j : check["judges"])
    if (j == judge) return true;
  return false;
}

json only_sandbox(const runner::RunOutcome& outcome) {
  INFO(outcome.result["summary"].dump());
  REQUIRE(outcome.result["sandboxes"].size() >= 1);
  CHECK(test::local::leftovers_of("/run/isoharness", outcome.result["run"]["id"].get<std::string>()).empty());
  return outcome.result["sandboxes"][0];
}

}  // namespace

TEST_CASE("node view: a lying agent in a weakened sandbox fails, both sides named", "[system][node_view]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto cfg = config(dir.path);
  weaken(cfg);
  cfg.forge_posture = [](const runner::Job& job, json& posture) {
    selftest::forge_clean_posture(posture, job.item->expect.get());
  };
  const auto outcome = runner::run(cfg);
  CHECK(outcome.exit_code == kExitVerdictFailed);
  const json sb = only_sandbox(outcome);
  INFO(sb["checks"].dump().substr(0, 6000));
  REQUIRE(sb.contains("node_view"));
  for (const char* control :
       {"capability:CAP_SYS_ADMIN", "capability_bounding", "pid_namespace", "root_filesystem"}) {
    INFO(control);
    const json* c = check_of(sb, control);
    REQUIRE(c != nullptr);
    CHECK((*c)["status"] == "fail");
    const std::string why = (*c)["reason"].get<std::string>();
    CHECK_THAT(why, Catch::Contains("the sandbox reports"));
    CHECK_THAT(why, Catch::Contains("the node sees"));
    CHECK(judged_by(*c, "node"));
    CHECK_FALSE(judged_by(*c, "posture"));  // the lie passed the sandbox's own judge
  }
}

TEST_CASE("node view: the same weakened sandbox with the honest probe fails as before",
          "[system][node_view]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto cfg = config(dir.path);
  weaken(cfg);
  const auto outcome = runner::run(cfg);
  CHECK(outcome.exit_code == kExitVerdictFailed);
  const json sb = only_sandbox(outcome);
  INFO(sb["checks"].dump().substr(0, 6000));
  for (const char* control :
       {"capability:CAP_SYS_ADMIN", "capabilities", "pid_namespace", "root_filesystem"}) {
    INFO(control);
    const json* c = check_of(sb, control);
    REQUIRE(c != nullptr);
    CHECK((*c)["status"] == "fail");
    CHECK(judged_by(*c, "posture"));
    CHECK(judged_by(*c, "node"));
  }
}

TEST_CASE("node view: a clean sandbox passes, its posture judged by the node too", "[system][node_view]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  const auto outcome = runner::run(config(dir.path));
  const json sb = only_sandbox(outcome);
  INFO(sb["checks"].dump().substr(0, 6000));
  CHECK(outcome.exit_code == kExitPass);
  for (const char* control : {"kernel",
                              "capabilities",
                              "capability_bounding",
                              "capability:CAP_SYS_ADMIN",
                              "no_new_privs",
                              "seccomp",
                              "uid",
                              "root_filesystem",
                              "host_devices",
                              "runtime_socket",
                              "pid_namespace",
                              "host_namespaces",
                              "host_path_mount",
                              "kubernetes_credentials",
                              "cgroup_interface",
                              "cgroup_mounts",
                              "proc_sys",
                              "sysrq",
                              "kallsyms",
                              "debugfs"}) {
    INFO(control);
    const json* c = check_of(sb, control);
    REQUIRE(c != nullptr);
    INFO(c->dump());
    CHECK((*c)["status"] == "pass");
    CHECK(judged_by(*c, "node"));
  }
}
