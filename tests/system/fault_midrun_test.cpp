// Faults injected while a run is mid-probe: the jumphost's sshd killed, the world's witness
// killed, the sandbox itself killed through its runtime, and SIGINT / SIGTERM to isoharness. Three
// sandboxes run one at a time under runc; s2's probe pauses (tests/fixtures/fault/isoprobe)
// and the fault lands in that pause, when s1 is finished and journalled.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "harness/common/error.h"
#include "tests/support/test_support.h"
#include "tests/system/fault_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::test::fault;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> kMidrunPrograms = {"runc", "sshd",    "ssh", "ssh-keygen",
                                                  "nft",  "dnsmasq", "ip"};

// A run of s1..sN (N = attempts, 3 unless given) stopped in s2's probe: s1 is in the
// journal when this returns.
struct PausedRun {
  explicit PausedRun(const std::string& dir, int attempts = 3)
      : out(dir + "/out"), cleanup{}, run(run_args(out, attempts, pausing_bundle(dir)), dir + "/run.log") {
    id = run.run_id(60s);
    REQUIRE_FALSE(id.empty());
    cleanup.run_id = id;
    INFO(run.err());
    REQUIRE(wait_paused_probe(id, 300s) != 0);
    REQUIRE(journalled_sandboxes(out + "/journal.jsonl") == std::vector<std::string>{"s1"});
  }
  std::string out;
  CleanupOnExit cleanup;  // after the run is killed (members go in reverse order)
  BackgroundRun run;
  std::string id;
};

nlohmann::json sandbox_of(const nlohmann::json& result, const std::string& id) {
  for (const auto& s : result["sandboxes"])
    if (s["id"] == id) return s;
  return nullptr;
}

// The world's witness (a process the run started, found by its command line and the run's tag).
pid_t world_witness_pid(const std::string& run_id) {
  const std::string wanted = std::string("witness\0--tag\0ih-", 17) + run_id + std::string("\0", 1);
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (test::read_text("/proc/" + pid + "/cmdline").find(wanted) != std::string::npos)
      return static_cast<pid_t>(std::stol(pid));
  }
  return 0;
}

}  // namespace

TEST_CASE("fault: the jumphost's sshd killed mid-probe stops the run and lists what it did not run",
          "[system][fault]") {
  test::require_system(kMidrunPrograms);
  test::local::ScratchDir dir;
  PausedRun paused(dir.path, 4);
  // The jumphost's sshd is its container's first process; its pid namespace goes with it,
  // and with it every session through the jump.
  REQUIRE(::kill(container_pid(paused.id, "jumphost"), SIGKILL) == 0);
  const int code = paused.run.wait(300s);
  INFO(paused.run.err());
  CHECK(code == kExitInfrastructure);
  CHECK_THAT(paused.run.err(), Catch::Contains("the jump connection died while isoprobe ran"));
  // s2's session died with the jump: its own error. s3 finds the jumphost gone for good:
  // the run stops there, and s4 is listed as not run, with why, everywhere.
  CHECK(journalled_sandboxes(paused.out + "/journal.jsonl") == std::vector<std::string>{"s1", "s2", "s3"});
  auto result = nlohmann::json::parse(test::read_text(paused.out + "/result.json"));
  CHECK(result["summary"]["verdict"] == "error");
  const auto s3 = sandbox_of(result, "s3");
  REQUIRE(s3.is_object());
  CHECK(s3.value("stopped_run", false));
  CHECK_THAT(s3["error"].get<std::string>(), Catch::Contains("cannot reach the jumphost"));
  REQUIRE(result["skipped"].size() == 1);
  CHECK(result["skipped"][0]["attempt"] == 4);
  CHECK(result["skipped"][0]["not_run"] == true);
  CHECK_THAT(result["skipped"][0]["reason"].get<std::string>(),
             Catch::Contains("not run: cannot reach the jumphost"));
  CHECK(result["summary"]["not_run"] == 1);
  CHECK_THAT(paused.run.err(), Catch::Contains("not run: 1 sandbox(es)"));
  CHECK_THAT(test::read_text(paused.out + "/report.md"), Catch::Contains("Sandboxes not run (1)"));
  CHECK_THAT(test::read_text(paused.out + "/junit.xml"), Catch::Contains("<error type=\"not_run\""));
  check_nothing_left(paused.id);
  check_rerun_works(dir.path);
}

TEST_CASE("fault: the world's witness killed mid-run leaves no egress check passing after it",
          "[system][fault]") {
  test::require_system(kMidrunPrograms);
  test::local::ScratchDir dir;
  PausedRun paused(dir.path);
  const pid_t witness = world_witness_pid(paused.id);
  REQUIRE(witness > 0);
  REQUIRE(::kill(witness, SIGKILL) == 0);
  // Its log stops short: every later probe window is uncovered by heartbeats, so every
  // egress check of s2 and s3 that needs it lacks its evidence and the run is an
  // infrastructure error.
  const int code = paused.run.wait(300s);
  INFO(paused.run.err());
  CHECK(code == kExitInfrastructure);
  CHECK_THAT(paused.run.err(), Catch::Contains("unwitnessed:"));
  auto result = nlohmann::json::parse(test::read_text(paused.out + "/result.json"));
  for (const char* id : {"s2", "s3"}) {
    const auto sb = sandbox_of(result, id);
    REQUIRE(sb.is_object());
    INFO(id << ": " << sb["checks"].dump().substr(0, 3000));
    int unwitnessed = 0;
    for (const auto& c : sb["checks"]) {
      if (c["control"].get<std::string>().rfind("egress:", 0) != 0) continue;
      INFO(c.dump().substr(0, 1500));
      // A pass may rest only on the drop point, for a way out the dead witness never covered.
      if (c["status"] == "pass")
        CHECK_THAT(c["evidence"].get<std::string>(), Catch::Contains("does not cover this way out"));
      if (c["status"] == "unwitnessed") ++unwitnessed;
    }
    CHECK(unwitnessed > 10);
  }
  check_nothing_left(paused.id);
}

TEST_CASE("fault: a sandbox killed mid-probe fails that sandbox with the reason", "[system][fault]") {
  test::require_system(kMidrunPrograms);
  test::local::ScratchDir dir;
  PausedRun paused(dir.path);
  REQUIRE(::kill(container_pid(paused.id, "s2"), SIGKILL) == 0);
  // A sandbox that dies is a verdict on that sandbox (its code could have done it), not
  // a fault of the harness: it fails with the reason and the run goes on to s3.
  const int code = paused.run.wait(300s);
  INFO(paused.run.err());
  CHECK(code == kExitVerdictFailed);
  CHECK(journalled_sandboxes(paused.out + "/journal.jsonl") == std::vector<std::string>{"s1", "s2", "s3"});
  auto result = nlohmann::json::parse(test::read_text(paused.out + "/result.json"));
  const auto s1 = sandbox_of(result, "s1");
  const auto s2 = sandbox_of(result, "s2");
  REQUIRE(s1.is_object());
  REQUIRE(s2.is_object());
  for (const auto& c : s1["checks"]) CHECK(c["status"] != "fail");
  // Nothing of the killed sandbox passes on the probe's word, and the reason is given.
  INFO(s2.dump().substr(0, 2000));
  bool explained = !s2["error"].is_null();
  for (const auto& c : s2["checks"]) {
    if (c["control"] == "posture" && c["status"] == "fail") explained = true;
    if (c["status"] == "pass")
      CHECK((c["control"] == "fresh_sandbox" || c["control"] == "fresh_process" ||
             c["control"] == "fresh_dns"));
  }
  CHECK(explained);
  check_nothing_left(paused.id);
  check_rerun_works(dir.path);
}

TEST_CASE("fault: SIGINT and SIGTERM mid-probe tear everything down and keep the journal",
          "[system][fault]") {
  test::require_system(kMidrunPrograms);
  const int sig = GENERATE(SIGINT, SIGTERM);
  INFO("signal " << sig);
  test::local::ScratchDir dir;
  PausedRun paused(dir.path);
  REQUIRE(::kill(paused.run.pid(), sig) == 0);
  const int code = paused.run.wait(300s);
  INFO(paused.run.err());
  CHECK(code == kExitInfrastructure);  // an interrupted run is an error verdict (README)
  CHECK_THAT(paused.run.err(), Catch::Contains("interrupted: every sandbox was torn down"));
  const auto ids = journalled_sandboxes(paused.out + "/journal.jsonl");
  REQUIRE_FALSE(ids.empty());
  CHECK(ids.front() == "s1");
  auto result = nlohmann::json::parse(test::read_text(paused.out + "/result.json"));
  CHECK(result["summary"]["interrupted"] == true);
  CHECK(result["summary"]["verdict"] == "error");
  check_nothing_left(paused.id);
  check_rerun_works(dir.path);
}
