// Hostile sandboxes through the real run path: the uploaded isoprobe is replaced by a
// script (tests/fixtures/hostile/isoprobe) that, depending on the sandbox, floods its
// output, never exits, prints malformed JSON, forges a passing document, closes the
// channel midway or fork-bombs. Each such sandbox must fail with the reason, the harness
// must stay within its memory and deadlines, the honest sandboxes before and after must
// still run and pass, and nothing of a forged document may pass.
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "harness/common/error.h"
#include "harness/runner/runner.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kPrograms = {"runc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip"};

// The real bundle with its launcher moved aside as isoprobe.real and the hostile script in
// its place, plus the forged document the script prints.
std::string hostile_bundle(const std::string& dir) {
  const std::string bundle = dir + "/bundle";
  fs::copy(test::binary_dir() + "/probes/isoprobe-bundle", bundle, fs::copy_options::recursive);
  fs::rename(bundle + "/isoprobe", bundle + "/isoprobe.real");
  fs::copy_file(test::source_dir() + "/tests/fixtures/hostile/isoprobe", bundle + "/isoprobe");
  fs::copy_file(test::source_dir() + "/tests/fixtures/hostile/forged.json", bundle + "/forged.json");
  return bundle;
}

long max_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// The checks the harness makes itself before isoprobe runs (file, process, resolver).
bool is_freshness(const std::string& control) {
  return control == "fresh_sandbox" || control == "fresh_process" || control == "fresh_dns";
}

// The sandbox's check of that control, or nullptr.
const json* check_of(const json& sandbox, const std::string& control) {
  for (const auto& c : sandbox["checks"])
    if (c["control"] == control) return &c;
  return nullptr;
}

std::string reason_of(const json& sandbox, const std::string& control) {
  for (const auto& c : sandbox["checks"])
    if (c["control"] == control && c["status"] == "fail") return c["reason"].get<std::string>();
  return "";
}

}  // namespace

TEST_CASE("hostile isoprobe output fails its own sandbox and nothing else", "[system][hostile]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  runner::RunConfig cfg;
  cfg.scenario_paths = {test::source_dir() + "/scenarios/standard.yaml"};
  cfg.command.scenarios_dir = test::source_dir() + "/scenarios";
  cfg.command.out_dir = dir.path + "/out";
  cfg.command.isoprobe_bundle = hostile_bundle(dir.path);
  cfg.runtimes = {"runc"};
  cfg.node_classes = {"tier"};
  cfg.attempts = 8;  // s1 .. s8, one at a time: honest, six hostile, honest
  cfg.parallel = 1;
  cfg.command.posture_deadline = std::chrono::seconds(30);

  auto outcome = runner::run(cfg);
  const json& result = outcome.result;
  INFO(result["summary"].dump());
  CHECK(outcome.exit_code == kExitVerdictFailed);
  CHECK(result["summary"]["infrastructure_error"].is_null());
  CHECK(result["summary"]["errors"] == 0);
  REQUIRE(result["sandboxes"].size() == 8);

  std::map<std::string, json> by_name;
  for (const auto& s : result["sandboxes"]) by_name[s["id"].get<std::string>()] = s;
  for (const char* honest : {"s1", "s8"}) {
    INFO(honest);
    for (const auto& c : by_name[honest]["checks"]) CHECK(c["status"] != "fail");
  }
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"s2", {"posture", "isoprobe wrote more than 8 MiB; the channel was closed at the bound"}},
      {"s3", {"posture", "isoprobe did not finish within its deadline of 30 s"}},
      {"s4", {"posture", "isoprobe printed no posture document (not a JSON document"}},
      {"s5", {"posture_schema", "off-schema or contradicts itself"}},
      {"s6", {"posture", "isoprobe"}},
  };
  for (const auto& [name, want] : expected) {
    INFO(name << ": " << by_name[name]["checks"].dump().substr(0, 1500));
    CHECK_THAT(reason_of(by_name[name], want.first), Catch::Contains(want.second));
    // Nothing the sandbox said passes; only the harness's own freshness checks may.
    for (const auto& c : by_name[name]["checks"])
      if (c["status"] == "pass") CHECK(is_freshness(c["control"].get<std::string>()));
    CHECK(by_name[name]["error"].is_null());
  }
  // The fork bomb fills the sandbox's pids limit, so the script itself can no longer fork
  // and runs into the deadline (or, on a faster machine, prints its forged document).
  {
    const std::string why = reason_of(by_name["s7"], "posture") + reason_of(by_name["s7"], "posture_schema");
    INFO(by_name["s7"]["checks"].dump().substr(0, 1500));
    CHECK_THAT(why, Catch::Contains("deadline") || Catch::Contains("off-schema or contradicts itself"));
    for (const auto& c : by_name["s7"]["checks"])
      if (c["status"] == "pass") CHECK(is_freshness(c["control"].get<std::string>()));
  }
  // The channel closed midway is the sandbox's doing, named as such.
  CHECK_THAT(reason_of(by_name["s6"], "posture"),
             Catch::Contains("the channel to the sandbox failed") || Catch::Contains("channel closed early"));
  // The deadline held for the probe that never exits (generous: the bound, not a speed).
  CHECK(by_name["s3"]["timings"]["posture_s"].get<double>() < 3 * 30.0);
  // 100 MB of output cost at most the 8 MiB cap (and the JSON of the rest of the run).
  CHECK(max_rss_mib() < 200);
  // Every sandbox is in the journal, and nothing of the run is left on the machine.
  std::ifstream journal(cfg.command.out_dir + "/journal.jsonl");
  int journalled = 0;
  for (std::string line; std::getline(journal, line);)
    if (json::parse(line).value("kind", "") == "sandbox") ++journalled;
  CHECK(journalled == 8);
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}

// An agent that sends to the canaries and reports every target blocked. The
// sandbox's egress is opened for UDP and ICMP and its resolver forwards every name
// (selftest's weakenings, behind the plan's back), so the packets really leave; the lying
// report would pass every egress check on its own word. The world's witness saw them.
TEST_CASE("an agent that reports blocked while it sends is failed by the witness", "[system][hostile]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  const std::string bundle = dir.path + "/bundle";
  fs::copy(test::binary_dir() + "/probes/isoprobe-bundle", bundle, fs::copy_options::recursive);
  fs::rename(bundle + "/isoprobe", bundle + "/isoprobe.real");
  fs::copy_file(test::source_dir() + "/tests/fixtures/hostile/lying_isoprobe", bundle + "/isoprobe");
  runner::RunConfig cfg;
  cfg.scenario_paths = {test::source_dir() + "/scenarios/standard.yaml"};  // no internet
  cfg.command.scenarios_dir = test::source_dir() + "/scenarios";
  cfg.command.out_dir = dir.path + "/out";
  cfg.command.isoprobe_bundle = bundle;
  cfg.runtimes = {"runc"};
  cfg.node_classes = {"tier"};
  cfg.attempts = 1;
  cfg.parallel = 1;
  cfg.test_weakenings = {"nft:allow-udp", "nft:allow-icmp", "dns:forward-every-name"};

  auto outcome = runner::run(cfg);
  const json& result = outcome.result;
  INFO(result["summary"].dump());
  CHECK(outcome.exit_code == kExitVerdictFailed);
  CHECK(result["summary"]["infrastructure_error"].is_null());
  REQUIRE(result["sandboxes"].size() == 1);
  const json& sb = result["sandboxes"][0];
  INFO(sb["checks"].dump().substr(0, 4000));
  CHECK(sb["witness"]["complete"] == true);
  for (const char* control :
       {"egress:canary-udp", "egress:canary-udp-443", "egress:canary-icmp", "egress:dns-exfil"}) {
    INFO(control);
    const std::string why = reason_of(sb, control);
    CHECK_THAT(why, Catch::Contains("rule B2"));
    CHECK_THAT(why, Catch::Contains("the sandbox reported timeout") ||
                        Catch::Contains("the sandbox reported dns_failed"));
  }
  // The lie is in the sandbox's own report: every egress result it gave reads blocked.
  for (const auto& o : sb["posture"]["observations"])
    if (o["name"] == "egress")
      for (const auto& t : o["value"]["targets"]) CHECK(t["result"] != "connected");
  // What no weakening opened stays closed, as the witnesses saw it: each check is there,
  // passes, expects "blocked" and was judged on the drop point's record with nothing
  // arriving (a missing check, a failing one or one judged on the sandbox's word fails here).
  for (const char* control :
       {"egress:canary-tcp", "egress:blocked-addr", "egress:metadata", "egress:cluster-api"}) {
    INFO(control);
    const json* check = check_of(sb, control);
    REQUIRE(check != nullptr);
    INFO(check->dump());
    CHECK((*check)["status"] == "pass");
    CHECK((*check)["expected"] == "blocked");
    CHECK_THAT((*check)["evidence"].get<std::string>(), Catch::Contains("judged by the witnesses (rule B6"));
  }
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}

namespace {

// An agent that sends nothing: tests/fixtures/hostile/silent_isoprobe aims every target at
// its own loopback and reports them all blocked (or, with claim-connected beside it, all
// reached). Run under the standard scenario (no internet), the sandbox's one result.
json silent_agent_run(const std::string& dir, bool claim_connected, int& exit_code) {
  const std::string bundle = dir + "/bundle";
  fs::copy(test::binary_dir() + "/probes/isoprobe-bundle", bundle, fs::copy_options::recursive);
  fs::rename(bundle + "/isoprobe", bundle + "/isoprobe.real");
  fs::copy_file(test::source_dir() + "/tests/fixtures/hostile/silent_isoprobe", bundle + "/isoprobe");
  if (claim_connected) std::ofstream(bundle + "/claim-connected") << "";
  runner::RunConfig cfg;
  cfg.scenario_paths = {test::source_dir() + "/scenarios/standard.yaml"};
  cfg.command.scenarios_dir = test::source_dir() + "/scenarios";
  cfg.command.out_dir = dir + "/out";
  cfg.command.isoprobe_bundle = bundle;
  cfg.runtimes = {"runc"};
  cfg.node_classes = {"tier"};
  cfg.attempts = 1;
  cfg.parallel = 1;
  auto outcome = runner::run(cfg);
  exit_code = outcome.exit_code;
  CHECK(test::local::leftovers_of("/run/isoharness", outcome.result["run"]["id"].get<std::string>()).empty());
  INFO(outcome.result["summary"].dump());
  REQUIRE(outcome.result["sandboxes"].size() == 1);
  return outcome.result["sandboxes"][0];
}

}  // namespace

// From inside, an agent that sends nothing and reports blocked looks exactly like a sealed
// sandbox; the drop point has no record of any attempt, so no egress check may pass, and the
// run ends as an infrastructure error (exit 3) naming the unwitnessed checks.
TEST_CASE("an agent that reports blocked and sends nothing passes no egress check", "[system][hostile]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  int exit_code = -1;
  const json sb = silent_agent_run(dir.path, false, exit_code);
  CHECK(exit_code == kExitInfrastructure);
  INFO(sb["checks"].dump().substr(0, 4000));
  int egress = 0, unwitnessed = 0;
  for (const auto& c : sb["checks"]) {
    const std::string control = c["control"].get<std::string>();
    if (control.rfind("egress:", 0) != 0) continue;
    INFO(c.dump());
    ++egress;
    CHECK(c["status"] != "pass");
    if (c["status"] == "unwitnessed") {
      ++unwitnessed;
      CHECK_THAT(c["reason"].get<std::string>(), Catch::Contains("nothing shows it was sent"));
    }
  }
  CHECK(egress > 10);
  CHECK(unwitnessed > 0);
}

// The same agent reporting every way out reached: each blocked one fails on its own word
// (rule B1), whatever the witnesses say, and the run's verdict is a failure.
TEST_CASE("an agent that reports connected and sends nothing fails every blocked way out",
          "[system][hostile]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  int exit_code = -1;
  const json sb = silent_agent_run(dir.path, true, exit_code);
  CHECK(exit_code == kExitVerdictFailed);
  INFO(sb["checks"].dump().substr(0, 4000));
  int blocked = 0;
  for (const auto& c : sb["checks"]) {
    if (c["control"].get<std::string>().rfind("egress:", 0) != 0 || c["expected"] != "blocked") continue;
    INFO(c.dump());
    ++blocked;
    CHECK(c["status"] == "fail");
    CHECK_THAT(c["reason"].get<std::string>(), Catch::Contains("rule B1"));
  }
  CHECK(blocked > 10);
}
