// A task's own compose.yaml against real runc and runsc sandboxes: `isoharness run` on
// scenarios/compose-ctf.yaml and scenarios/compose-helper.yaml deploys every service the
// compose file names, applies the settings the file gives (env, working directory, CPU
// and memory limits), and walls off the network_mode: none service exactly as an inline
// one (scenarios/siblings.yaml): every check passes under runc and gVisor.
#include <catch2/catch.hpp>
#include <set>

#include "harness/common/error.h"
#include "harness/runner/runner.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using nlohmann::json;

namespace {

const std::vector<std::string> kComposePrograms = {"runc",       "runsc", "sshd",    "ssh",
                                                   "ssh-keygen", "nft",   "dnsmasq", "ip"};

runner::RunConfig compose_config(const std::string& scenario, const std::string& out) {
  runner::RunConfig c;
  c.scenario_paths = {test::source_dir() + "/scenarios/" + scenario};
  c.command.scenarios_dir = test::source_dir() + "/scenarios";
  c.command.out_dir = out;
  c.command.isoprobe_bundle = test::binary_dir() + "/probes/isoprobe-bundle";
  c.parallel = 2;
  return c;
}

const json* compose_check(const json& sandbox, const std::string& control) {
  for (const auto& c : sandbox["checks"])
    if (c["control"] == control) return &c;
  return nullptr;
}

void require_passes(const json& sandbox, const std::vector<std::string>& controls) {
  for (const auto& control : controls) {
    INFO(sandbox["id"] << " " << control);
    const json* c = compose_check(sandbox, control);
    REQUIRE(c);
    CHECK((*c)["status"] == "pass");
  }
}

}  // namespace

TEST_CASE("compose: a task's own compose.yaml, its none scorer walled off, under runc and gVisor",
          "[system][compose]") {
  test::require_system(kComposePrograms);
  test::local::ScratchDir dir;
  auto outcome = runner::run(compose_config("compose-ctf.yaml", dir.path));
  INFO(outcome.result.dump(1).substr(0, 20000));
  CHECK(outcome.exit_code == 0);
  std::set<std::string> runtimes, levels;
  for (const auto& s : outcome.result["sandboxes"]) {
    REQUIRE(s["error"].is_null());
    runtimes.insert(s["runtime"].get<std::string>());
    levels.insert(s["level"].get<std::string>());
    REQUIRE(s["facts"]["siblings"].size() == 1);
    require_passes(s, {"sibling:scorer", "sibling:scorer:harness_exec", "sibling:scorer:isolated"});
    CHECK_THAT((*compose_check(s, "sibling:scorer"))["observed"].get<std::string>(),
               !Catch::Contains("connected"));
    // The compose file's settings reached the agent's container.
    const json& settings = s["facts"]["service_settings"];
    CHECK(settings["working_dir"] == "/home/agent");
    CHECK(settings["env"] == json{"CTF_TARGET", "CTF_LEVEL"});
    CHECK(settings["memory_limit_bytes"] == 1073741824);
    CHECK(settings["cpu_limit_millis"] == 1000);
  }
  CHECK(runtimes == std::set<std::string>{"runc", "gvisor"});
  CHECK(levels == std::set<std::string>{"standard", "strict"});
  CHECK(test::local::leftovers_of("/run/isoharness", outcome.result["run"]["id"].get<std::string>()).empty());
}

TEST_CASE("compose: x-default picks the workstation; helper by name, grader walled off",
          "[system][compose]") {
  test::require_system(kComposePrograms);
  test::local::ScratchDir dir;
  auto outcome = runner::run(compose_config("compose-helper.yaml", dir.path));
  INFO(outcome.result.dump(1).substr(0, 20000));
  CHECK(outcome.exit_code == 0);
  int sandboxes = 0;
  for (const auto& s : outcome.result["sandboxes"]) {
    REQUIRE(s["error"].is_null());
    ++sandboxes;
    REQUIRE(s["facts"]["siblings"].size() == 2);
    require_passes(s, {"sibling:helper", "sibling:grader", "sibling:grader:isolated"});
    CHECK_THAT((*compose_check(s, "sibling:helper"))["observed"].get<std::string>(),
               Catch::Contains("by name: connected"));
    CHECK(s["facts"]["service_settings"]["env"] == json{"HELPER_HOST"});
  }
  CHECK(sandboxes == 2);  // runc and gVisor
  CHECK(test::local::leftovers_of("/run/isoharness", outcome.result["run"]["id"].get<std::string>()).empty());
}
