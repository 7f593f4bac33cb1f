// `isoharness selftest` against real runc and runsc sandboxes: a few weakenings under both
// runtimes are caught by the controls the catalogue names and the clean sandboxes raise
// no false alarm; with one verify check taken away (the test seam), the weakening only
// that check catches gets through and selftest exits 1 naming it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kPrograms = {"runc", "runsc", "sshd", "ssh-keygen", "nft", "dnsmasq", "ip"};

std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

RunResult selftest(const std::vector<std::string>& args, const std::string& out,
                   std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv = {
      isoharness_bin(), "selftest", "--scenarios-dir", test::source_dir() + "/scenarios", "--out", out};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_command(argv, RunOptions{.deadline = std::chrono::minutes(15), .env_set = std::move(env)});
  REQUIRE(r.has_value());
  return *r;
}

const json& weakening(const json& section, const std::string& name) {
  for (const auto& w : section["weakenings"])
    if (w["name"] == name) return w;
  FAIL("no weakening " << name << " in the section");
  throw;
}

bool caught_by(const json& cell, const std::string& control) {
  if (cell["status"] != "caught") return false;
  for (const auto& c : cell["caught_by"])
    if (c == control) return true;
  return false;
}

}  // namespace

TEST_CASE("selftest: a quick subset is caught under runc and gVisor, with clean controls clean",
          "[system][selftest]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto r = selftest({"--runtimes", "runc,gvisor", "--parallel", "4", "--only",
                     "cap_sys_admin_kept,runc_instead_of_gvisor,privilege_escalation_allowed,egress_metadata,"
                     "runtime_socket_mounted"},
                    dir.path);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  for (const char* f : {"result.json", "selftest.md", "selftest.html", "junit.xml", "journal.jsonl"})
    CHECK(fs::exists(dir.path + "/" + f));
  json result = json::parse(test::read_text(dir.path + "/result.json"));
  const json& s = result["selftest"];
  CHECK(s["summary"]["verdict"] == "pass");
  CHECK(s["summary"]["missed"].empty());
  CHECK(s["summary"]["false_alarms"].empty());

  const auto& cap = weakening(s, "cap_sys_admin_kept")["cells"];
  CHECK(caught_by(cap["runc"], "capability:CAP_SYS_ADMIN"));
  CHECK(caught_by(cap["gvisor"],
                  "capability_bounding"));  // the non-root login's CapEff is cleared under gVisor
  const auto& runtime = weakening(s, "runc_instead_of_gvisor")["cells"];
  CHECK(runtime["runc"]["status"] == "n/a");
  CHECK(caught_by(runtime["gvisor"], "kernel"));
  const auto& nnp = weakening(s, "privilege_escalation_allowed")["cells"];
  CHECK(caught_by(nnp["runc"], "no_new_privs"));
  CHECK(nnp["gvisor"]["status"] == "n/a");
  CHECK(nnp["gvisor"]["reason"].get<std::string>().find("no_new_privs") != std::string::npos);
  CHECK(caught_by(weakening(s, "egress_metadata")["cells"]["runc"], "egress:metadata"));
  CHECK(caught_by(weakening(s, "egress_metadata")["cells"]["gvisor"], "egress:metadata"));
  CHECK(caught_by(weakening(s, "runtime_socket_mounted")["cells"]["runc"], "runtime_socket"));
  REQUIRE(s["clean"].size() == 2);  // one clean control per runtime
  for (const auto& c : s["clean"]) CHECK(c["status"] == "clean");

  // Every weakened sandbox says so in its facts and record: none can pass for a real one.
  int weakened = 0;
  for (const auto& sb : result["sandboxes"]) {
    if (!sb.contains("weakenings")) continue;
    ++weakened;
    CHECK_FALSE(sb["weakenings"].empty());
  }
  CHECK(weakened > 0);
  std::string md = test::read_text(dir.path + "/selftest.md");
  CHECK(md.find("✅ PASS") != std::string::npos);
  CHECK(md.find("under gvisor: this gVisor") != std::string::npos);
  std::string junit = test::read_text(dir.path + "/junit.xml");
  CHECK(junit.find("<failure") == std::string::npos);
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}

TEST_CASE("selftest: without the check that catches it, a weakening gets through and selftest exits 1",
          "[system][selftest]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto r = selftest({"--runtimes", "runc", "--only", "egress_metadata,cap_sys_admin_kept"}, dir.path,
                    {{"ISOHARNESS_TEST_DISABLE_CHECK", "egress:metadata"}});
  INFO(r.err);
  CHECK(r.exit_code == kExitVerdictFailed);
  CHECK(r.err.find("GOT THROUGH: egress_metadata (runc)") != std::string::npos);
  CHECK(r.err.find("cap_sys_admin_kept (runc)") == std::string::npos);  // still caught
  json result = json::parse(test::read_text(dir.path + "/result.json"));
  CHECK(result["selftest"]["summary"]["missed"] == json::array({"egress_metadata (runc)"}));
  CHECK(result["selftest"]["disabled_checks"] == json::array({"egress:metadata"}));
  CHECK(test::read_text(dir.path + "/junit.xml").find("<failure type=\"missed\"") != std::string::npos);
}

TEST_CASE("selftest: with the verifier's own evidence taken away, nothing that needed it passes",
          "[system][selftest]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto r = selftest({"--runtimes", "runc,gvisor", "--parallel", "2", "--only",
                     "witness_killed,witness_log_truncated,witness_flooded,agent_sends_nothing"},
                    dir.path);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  json result = json::parse(test::read_text(dir.path + "/result.json"));
  const json& s = result["selftest"];
  for (const char* name :
       {"witness_killed", "witness_log_truncated", "witness_flooded", "agent_sends_nothing"}) {
    const json& w = weakening(s, name);
    CHECK(w["judge"] == "evidence");
    for (const char* runtime : {"runc", "gvisor"}) {
      INFO(name << " under " << runtime << ": " << w["cells"][runtime].dump());
      CHECK(w["cells"][runtime]["status"] == "caught");
    }
  }
  for (const auto& c : s["clean"]) CHECK(c["status"] == "clean");
  // In every weakened sandbox, no way out the weakening left without evidence passed: each
  // ended unwitnessed (saying which evidence was missing) or failed.
  int weakened = 0;
  for (const auto& sb : result["sandboxes"]) {
    if (!sb.contains("weakenings")) continue;
    ++weakened;
    const std::string name = sb["weakenings"][0];
    const json& caught_by = weakening(s, name)["caught_by"];
    int withheld = 0;
    for (const auto& c : sb["checks"]) {
      if (std::find(caught_by.begin(), caught_by.end(), c["control"]) == caught_by.end()) continue;
      INFO(name << " (" << sb["runtime"] << "): " << c.dump());
      CHECK(c["status"] != "pass");
      // Each for its own reason: a sandbox after the flooder never inherits its spent share.
      if (name != "witness_flooded")
        CHECK(c.value("evidence", std::string()).find("share of the log ran out") == std::string::npos);
      if (c["status"] == "unwitnessed") {
        CHECK_THAT(c.value("reason", std::string()) + c.value("observed", std::string()),
                   Catch::Contains("witness") || Catch::Contains("drop"));
        ++withheld;
      }
    }
    CHECK(withheld > 0);
  }
  CHECK(weakened == 8);
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}

TEST_CASE("selftest: an unknown weakening is refused before anything is deployed", "[system][selftest]") {
  test::local::ScratchDir dir;
  auto r = selftest({"--only", "cap_sys_admin_kept,no_such_weakening"}, dir.path);
  CHECK(r.exit_code == kExitBadInput);
  CHECK(r.err.find("no_such_weakening") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path + "/journal.jsonl"));
}
