// Sibling services against real runc and runsc sandboxes: `isoharness run` on
// scenarios/siblings.yaml deploys every service of each item (each its own sandbox),
// and the result shows each sibling's reachability with evidence; a node policy weakened
// behind the plan's back (the `none` scorer left reachable) makes the run exit 1 naming
// the sibling control.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/runner/runner.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kPrograms = {"runc",       "runsc", "sshd",    "ssh",
                                            "ssh-keygen", "nft",   "dnsmasq", "ip"};

std::string scenarios() {
  return test::source_dir() + "/scenarios";
}

runner::RunConfig siblings_config(const std::string& out) {
  runner::RunConfig c;
  c.scenario_paths = {scenarios() + "/siblings.yaml"};
  c.command.scenarios_dir = scenarios();
  c.command.out_dir = out;
  c.command.isoprobe_bundle = test::binary_dir() + "/probes/isoprobe-bundle";
  c.parallel = 2;
  return c;
}

const json* check_of(const json& sandbox, const std::string& control) {
  for (const auto& c : sandbox["checks"])
    if (c["control"] == control) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("siblings: every service deployed; scorer walled off, helper reachable, under runc and gVisor",
          "[system][siblings]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto outcome = runner::run(siblings_config(dir.path));
  INFO(outcome.result.dump(1).substr(0, 20000));
  CHECK(outcome.exit_code == 0);
  std::set<std::string> runtimes, levels;
  int second_attempts = 0;
  for (const auto& s : outcome.result["sandboxes"]) {
    REQUIRE(s["error"].is_null());
    runtimes.insert(s["runtime"].get<std::string>());
    levels.insert(s["level"].get<std::string>());
    // Each sibling is its own sandbox, with its own address and the exec the harness used.
    REQUIRE(s["facts"]["siblings"].size() == 2);
    std::set<std::string> addresses = {s["facts"]["address"].get<std::string>()};
    for (const auto& sib : s["facts"]["siblings"]) addresses.insert(sib["address"].get<std::string>());
    CHECK(addresses.size() == 3);
    for (const char* control : {"sibling:scorer", "sibling:helper", "sibling:scorer:harness_exec",
                                "sibling:scorer:isolated", "fresh_sandbox", "fresh_process", "fresh_dns"}) {
      const json* c = check_of(s, control);
      INFO(s["id"] << " " << control);
      REQUIRE(c);
      CHECK((*c)["status"] == "pass");
    }
    CHECK_THAT((*check_of(s, "sibling:helper"))["observed"].get<std::string>(),
               Catch::Contains("by name: connected"));
    CHECK_THAT((*check_of(s, "sibling:scorer"))["observed"].get<std::string>(),
               !Catch::Contains("connected"));
    CHECK_FALSE((*check_of(s, "sibling:scorer"))["evidence"].get<std::string>().empty());
    CHECK_FALSE((*check_of(s, "sibling:scorer:isolated"))["evidence"].get<std::string>().empty());
    CHECK(s["siblings"]["scorer"]["answered"] == true);
    if (s["attempt"] == 2) ++second_attempts;
  }
  CHECK(runtimes == std::set<std::string>{"runc", "gvisor"});
  CHECK(levels == std::set<std::string>{"standard", "strict"});
  CHECK(second_attempts > 0);
  CHECK(test::local::leftovers_of("/run/isoharness", outcome.result["run"]["id"].get<std::string>()).empty());
  // Every container went when its sandbox did, not at the end of the run: runsc once
  // refused "ih-<run>-s1" while "ih-<run>-s1-scorer" existed (container_id).
  std::ifstream log(dir.path + "/isoharness.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK_FALSE(text.empty());
  CHECK(text.find("is ambiguous") == std::string::npos);
}

TEST_CASE("siblings: the none scorer left reachable behind the plan's back fails the sibling control",
          "[system][siblings]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto cfg = siblings_config(dir.path);
  cfg.runtimes = {"runc"};
  cfg.attempts = 1;
  cfg.test_weakenings = {deploy::local::kWeakenNoneSiblingReachable};
  auto outcome = runner::run(cfg);
  CHECK(outcome.exit_code == kExitVerdictFailed);
  int named = 0;
  for (const auto& s : outcome.result["sandboxes"]) {
    CHECK(s["tampered"] == true);
    CHECK(s["facts"]["test_weakenings"][0] == "none-sibling-reachable");
    const json* c = check_of(s, "sibling:scorer");
    REQUIRE(c);
    CHECK((*c)["status"] == "fail");
    CHECK_THAT((*c)["reason"].get<std::string>(),
               Catch::Contains("network_mode none but the agent reaches it"));
    const json* inside = check_of(s, "sibling:scorer:isolated");
    REQUIRE(inside);
    CHECK((*inside)["status"] == "fail");
    ++named;
  }
  CHECK(named > 0);
  CHECK(test::local::leftovers_of("/run/isoharness", outcome.result["run"]["id"].get<std::string>()).empty());
}

TEST_CASE("siblings: an unknown test weakening is refused before anything starts", "[system][siblings]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto cfg = siblings_config(dir.path);
  cfg.runtimes = {"runc"};
  cfg.attempts = 1;
  cfg.test_weakenings = {"open-everything"};
  auto outcome = runner::run(cfg);
  // The backend refuses the first sandbox (no container starts) and the run stops there.
  CHECK(outcome.exit_code == kExitInfrastructure);
  CHECK(outcome.result["summary"]["verdict"] == "error");
  const auto& records = outcome.result["sandboxes"];
  REQUIRE_FALSE(records.empty());
  for (const auto& s : records) {
    REQUIRE(s["error"].is_string());
    CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("open-everything"));
    CHECK(s["checks"].empty());
  }
}
