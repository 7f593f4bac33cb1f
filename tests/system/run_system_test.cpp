// `isoharness run` against real runc and runsc sandboxes: the verdicts, the reports, a
// sandbox misconfigured behind the policy's back, and what isoharness observes compared
// with what OpenSSH's own `ssh -J` plus plain shell commands see on the same sandbox.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "harness/common/subprocess.h"
#include "harness/deploy/factory/backend_factory.h"
#include "harness/policy/plan.h"
#include "harness/runner/jump_pool.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/run_support.h"
#include "harness/runner/runner.h"
#include "harness/scenario/scenario.h"
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
std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}
std::string bundle() {
  return test::binary_dir() + "/probes/isoprobe-bundle";
}
// What `isoharness run` uploads when given no --isoprobe-bundle: the posture agent with its
// unpacker (sent packed).
std::string posture_agent_dir() {
  return test::binary_dir() + "/probes/isoprobe-posture";
}

json read_json(const std::string& path) {
  return json::parse(test::read_text(path));
}

std::vector<std::string> failed_controls(const json& result) {
  std::vector<std::string> out;
  for (const auto& s : result["sandboxes"])
    for (const auto& c : s["checks"])
      if (c["status"] == "fail") out.push_back(c["control"].get<std::string>());
  return out;
}

runner::RunConfig config_for(const std::string& scenario, const std::string& out) {
  runner::RunConfig c;
  c.scenario_paths = {scenarios() + "/" + scenario};
  c.command.scenarios_dir = scenarios();
  c.command.out_dir = out;
  c.command.isoprobe_bundle = bundle();
  c.parallel = 2;
  return c;
}

}  // namespace

TEST_CASE("run: strict and standard under both runtimes pass and write every report", "[system][run]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto r = run_command(
      {isoharness_bin(), "run", scenarios() + "/strict.yaml", scenarios() + "/standard.yaml",
       "--scenarios-dir", scenarios(), "--runtimes", "runc,gvisor", "--attempts", "2", "--out", dir.path},
      RunOptions{.deadline = std::chrono::minutes(15)});
  REQUIRE(r.has_value());
  INFO(r->err);
  CHECK(r->exit_code == 0);
  for (const char* f : {"result.json", "report.md", "junit.xml", "journal.jsonl"})
    CHECK(fs::exists(dir.path + "/" + f));
  json result = read_json(dir.path + "/result.json");
  CHECK(result["summary"]["verdict"] == "pass");
  CHECK(failed_controls(result).empty());
  std::set<std::string> runtimes;
  int fresh_checked = 0;
  for (const auto& s : result["sandboxes"]) {
    runtimes.insert(s["runtime"].get<std::string>());
    CHECK(s["error"].is_null());
    for (const auto& c : s["checks"])
      if (c["control"] == "fresh_sandbox" && s["attempt"] == 2 && c["status"] == "pass") ++fresh_checked;
  }
  CHECK(runtimes == std::set<std::string>{"runc", "gvisor"});
  CHECK(fresh_checked > 0);
  // Fan-out: run uploads the one-file posture agent, not the bundle, and hands isoprobe the
  // deployment profile's egress deadline.
  const auto agent_bytes = fs::file_size(test::binary_dir() + "/probes/isoprobe-posture/isoprobe");
  const int egress_ms = scenario::load_deployment(scenarios() + "/deployments/local.yaml").egress_deadline_ms;
  // The upload is checked by size, and the agent's digest of its own file is compared.
  auto sum = run_command({"sha256sum", test::binary_dir() + "/probes/isoprobe-posture/isoprobe"});
  REQUIRE(sum.has_value());
  const std::string agent_sha = sum->out.substr(0, 64);
  for (const auto& s : result["sandboxes"]) {
    CHECK(s["facts"]["isoprobe_upload_bytes"] == agent_bytes);
    CHECK(s["posture"]["context"]["egress_deadline_ms"] == egress_ms);
    CHECK(s["posture"]["context"]["verified_file"]["sha256"] == agent_sha);
    int agent_checks = 0;
    for (const auto& c : s["checks"])
      if (c["control"] == "agent_upload") {
        ++agent_checks;
        CHECK(c["status"] == "pass");
      }
    CHECK(agent_checks == 1);
  }
  // The strict item never ran under runc: skipped, with the reason.
  bool strict_skipped_on_runc = false;
  for (const auto& s : result["skipped"])
    if (s["scenario"] == "strict" && s["runtime"] == "runc") strict_skipped_on_runc = true;
  CHECK(strict_skipped_on_runc);
  std::string md = test::read_text(dir.path + "/report.md");
  CHECK(md.find("pass") != std::string::npos);
  std::string junit = test::read_text(dir.path + "/junit.xml");
  CHECK(junit.find("<testcase") != std::string::npos);
  CHECK(junit.find("<failure") == std::string::npos);
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}

TEST_CASE("run: a sandbox started under runc behind the plan's back fails the kernel check",
          "[system][run]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto cfg = config_for("strict.yaml", dir.path);
  cfg.runtimes = {"gvisor"};
  cfg.tamper = [](const std::string&, const std::string&, json& values) {
    values["services"]["default"]["runtimeClassName"] = "CLUSTER_DEFAULT";
  };
  auto outcome = runner::run(cfg);
  CHECK(outcome.exit_code == kExitVerdictFailed);
  auto failed = failed_controls(outcome.result);
  CHECK(std::find(failed.begin(), failed.end(), "kernel") != failed.end());
  // No emulation excuses for a sandbox that is not under gVisor.
  for (const auto& s : outcome.result["sandboxes"])
    for (const auto& c : s["checks"])
      if (c["status"] == "pass") CHECK(c["reason"].get<std::string>().find("emulated") == std::string::npos);
}

TEST_CASE("run: CAP_SYS_ADMIN kept behind the plan's back is named", "[system][run]") {
  // The GPU item of gpu-strict runs on the node's runc with every other strict control; a
  // login as uid 1000 keeps the container's capabilities there (ambient), so a kept
  // CAP_SYS_ADMIN is visible to the probe. (Under gVisor the non-root login's effective set
  // is cleared, which would hide it.)
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto cfg = config_for("gpu-strict.yaml", dir.path);
  cfg.runtimes = {"runc"};
  cfg.tamper = [](const std::string&, const std::string&, json& values) {
    values["services"]["default"]["securityContext"]["capabilities"] = {{"drop", json::array()},
                                                                        {"add", {"SYS_ADMIN"}}};
  };
  auto outcome = runner::run(cfg);
  CHECK(outcome.exit_code == kExitVerdictFailed);
  auto failed = failed_controls(outcome.result);
  CHECK(std::find(failed.begin(), failed.end(), "capability:CAP_SYS_ADMIN") != failed.end());
  CHECK(std::find(failed.begin(), failed.end(), "capabilities") != failed.end());
  std::string md = test::read_text(dir.path + "/report.md");
  CHECK(md.find("CAP_SYS_ADMIN") != std::string::npos);
}

TEST_CASE("run: CAP_SYS_ADMIN kept under gVisor is named through the bounding set", "[system][run]") {
  // strict.yaml runs under gVisor and logs in as uid 1000, whose effective set gVisor
  // clears: CapEff alone would hide the grant. CapBnd, the container's ceiling, shows it.
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto cfg = config_for("strict.yaml", dir.path);
  cfg.runtimes = {"gvisor"};
  cfg.attempts = 1;
  cfg.tamper = [](const std::string&, const std::string&, json& values) {
    values["services"]["default"]["securityContext"]["capabilities"] = {{"drop", json::array()},
                                                                        {"add", {"SYS_ADMIN"}}};
  };
  auto outcome = runner::run(cfg);
  CHECK(outcome.exit_code == kExitVerdictFailed);
  auto failed = failed_controls(outcome.result);
  INFO(outcome.result["sandboxes"].dump().substr(0, 2000));
  CHECK(std::find(failed.begin(), failed.end(), "capability_bounding") != failed.end());
  CHECK(std::find(failed.begin(), failed.end(), "capability:CAP_SYS_ADMIN") != failed.end());
}

TEST_CASE("run: isoharness sees what ssh -J and a shell see on the same sandbox", "[system][run]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto profile = scenario::load_deployment(scenarios() + "/deployments/local.yaml");
  const std::string run_id = runner::random_run_id();
  runner::RunKey key(run_id);
  auto backend =
      deploy::make_backend(scenario::BackendKind::local, profile, {run_id, dir.path, false, nullptr});

  runner::RunSettings settings;
  settings.run_id = run_id;
  settings.credentials.private_key_path = key.private_path();
  settings.credentials.public_key_path = key.public_path();
  settings.public_key_line = key.public_line();
  settings.isoprobe_bundle = bundle();
  settings.targets = {{"target-addr", "203.0.113.10", 80, "tcp", "target.example.com", "internet"}};
  runner::RunState state;
  runner::JumpPool jumps(settings.credentials, settings.host_key_policy, false, nullptr);
  runner::Journal journal(dir.path + "/journal", {{"schema", "isoharness.result/v1"}});
  const runner::JobContext ctx{settings, *backend, journal, jumps, state};

  // OpenSSH logs in with the same key: copy it where the test support expects it.
  fs::copy_file(key.private_path(), dir.path + "/id_ed25519");
  fs::permissions(dir.path + "/id_ed25519", fs::perms::owner_read | fs::perms::owner_write);

  int n = 0;
  for (const char* scenario_file : {"strict.yaml", "strict-egress.yaml", "standard.yaml"}) {
    INFO(scenario_file);
    auto planned = runner::plan_scenarios({scenarios() + "/" + scenario_file}, profile, false);
    REQUIRE_FALSE(planned.front().items.empty());
    const runner::PlanItemPtr& item = planned.front().items.front();
    runner::Job job{planned.front().scenario.name, item, item->runtime_class ? "gvisor" : "runc", "tier", 1};
    {
      runner::LiveSandbox sandbox(ctx, runner::make_request(job, 1, "cmp" + std::to_string(++n), settings));
      auto& session = sandbox.connect(std::chrono::seconds(45));
      sandbox.upload_isoprobe();
      auto posture_run = session.exec({runner::kRemoteProbe, "posture", "--deadline-ms", "8000", "--target",
                                       "target-addr=203.0.113.10:80/tcp"},
                                      std::chrono::seconds(90), 8 << 20);
      REQUIRE(posture_run.has_value());
      json posture = json::parse(posture_run->out);
      std::map<std::string, json> obs;
      for (const auto& o : posture["observations"]) obs[o["name"].get<std::string>()] = o["value"];

      auto shell = test::local::ssh_through_jumphost(
          dir.path, job.scenario, sandbox.handle().route,
          {"bash", "-c",
           "uname -r; grep CapEff /proc/self/status | awk '{print $2}'; " +
               test::local::answer_probe_function() + "probe 203.0.113.10/80 '" +
               test::local::printf_escaped("GET / HTTP/1.0\r\nHost: target.example.com\r\n\r\n") +
               "' 'isoharness world: target'"});
      REQUIRE(shell.exit_code == 0);
      std::istringstream lines(shell.out);
      std::string release, capeff, egress;
      std::getline(lines, release);
      std::getline(lines, capeff);
      std::getline(lines, egress);
      INFO(shell.out);
      CHECK(obs["kernel"]["release"] == release);
      CHECK(obs["capabilities"]["eff"] == capeff);
      std::string probe_egress = obs["egress"]["targets"][0]["result"];
      CHECK((probe_egress == "connected") == (egress == "open"));
      // And the two agree with the plan.
      bool allowed =
          policy::egress_permitted(item->expect.get(), "internet", "target.example.com", "203.0.113.10");
      CHECK((egress == "open") == allowed);
    }
  }
  backend.reset();
  CHECK(test::local::leftovers_of("/run/isoharness", run_id).empty());
}

// A far, lossy jumphost link (the profile's jumphost_link): a 40 ms round trip (the world's
// link relay) and 5 % of the packets crossing the host <-> jumphost link dropped each way.
// SSH over TCP retransmits; the run still passes, with every check it passes on a clean
// link, and the result names the link it had. That the link really drops that share is
// measured in link_system_test ("jumphost_link.loss_percent"), on the same world code; the
// world's readiness waits (the jumphost's sshd, the relay) open a new connection every
// second, so a lost SYN costs a second, not TCP's SYN backoff.
TEST_CASE("run: a far jumphost link losing 5 % of its packets still passes", "[system][run]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  json profile = json::parse(
      R"({"name": "lossy", "backend": "local", "runtime_classes": ["gvisor"], "sandbox_runtime_class": "gvisor",
          "sandbox_runtime_class_is_default": false, "runtime_handlers": {"gvisor": "runsc"},
          "node_classes": {"tier": {"cpuset": "1", "noisy_neighbour": false},
                           "non-tier": {"cpuset": "0-1", "noisy_neighbour": true}},
          "egress_deadline_ms": 2000, "jumphost_link": {"rtt_ms": 40, "loss_percent": 5},
          "accepted_runtime_escapes": [
            {"component": "runc", "cve": "CVE-2025-31133", "reason": "as the local profile: Debian 12's runc"},
            {"component": "runc", "cve": "CVE-2025-52565", "reason": "as the local profile: Debian 12's runc"},
            {"component": "runc", "cve": "CVE-2025-52881", "reason": "as the local profile: Debian 12's runc"},
            {"component": "runc", "cve": "CVE-2026-41579", "reason": "as the local profile: Debian 12's runc"}]})");
  std::ofstream(dir.path + "/lossy.yaml") << profile.dump();  // JSON is YAML
  auto cfg = config_for("standard.yaml", dir.path + "/out");
  cfg.command.isoprobe_bundle = posture_agent_dir();  // packed, as `run` sends it
  cfg.command.deployment_path = dir.path + "/lossy.yaml";
  cfg.runtimes = {"runc"};
  cfg.node_classes = {"tier"};
  cfg.attempts = 1;
  auto outcome = runner::run(cfg);
  INFO(outcome.result["summary"].dump());
  CHECK(outcome.exit_code == kExitPass);
  CHECK(outcome.result["context"]["jumphost_link"]["loss_percent"] == 5.0);
  CHECK(outcome.result["context"]["jumphost_link"]["rtt_ms"] == 40);
  const auto& memory = outcome.result["context"]["harness_memory"];
  CHECK(memory["peak_rss_mib"].get<double>() > 1);
  CHECK(memory["most_sandboxes_held"] == 1);
  REQUIRE(outcome.result["sandboxes"].size() == 1);
  CHECK(outcome.result["sandboxes"][0]["error"].is_null());
  CHECK(outcome.result["sandboxes"][0]["facts"]["isoprobe_upload_bytes"] ==
        fs::file_size(posture_agent_dir() + "/isoprobe"));
  CHECK(failed_controls(outcome.result).empty());  // agent_upload among them: the unpacked agent's digest
}

namespace {

// control -> status of a run's only sandbox.
std::map<std::string, std::string> checks_of(const json& result) {
  std::map<std::string, std::string> out;
  REQUIRE(result["sandboxes"].size() == 1);
  for (const auto& c : result["sandboxes"][0]["checks"])
    out[c["control"].get<std::string>()] = c["status"].get<std::string>();
  return out;
}

}  // namespace

// A sandbox whose sshd serves no SFTP (the test seam sshd:no-sftp: a real sshd without the
// `Subsystem sftp` line) gets its agent over an exec channel (as every sandbox does now that
// the agent goes packed) and passes with the very checks
// the same item passes when its sshd serves SFTP: strict under gVisor (its only runtime),
// standard under runc.
TEST_CASE("run: a sandbox whose sshd has no SFTP subsystem passes like one that has it", "[system][run]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  const std::vector<std::pair<std::string, std::string>> cells = {{"strict.yaml", "gvisor"},
                                                                  {"standard.yaml", "runc"}};
  for (const auto& [scenario_file, runtime] : cells) {
    auto cfg = config_for(scenario_file, dir.path + "/sftp-" + runtime);
    cfg.command.isoprobe_bundle = posture_agent_dir();
    cfg.runtimes = {runtime};
    cfg.node_classes = {"tier"};
    cfg.attempts = 1;
    auto with_sftp = runner::run(cfg);
    INFO(runtime << " with SFTP: " << with_sftp.result["summary"].dump());
    REQUIRE(with_sftp.exit_code == kExitPass);
    // The agent goes packed (the unpacker and the xz stream in one exec channel), so it
    // needs no SFTP either way.
    CHECK(with_sftp.result["sandboxes"][0]["facts"]["isoprobe_upload_via"] == "exec");
    // The record says how it went: xz, and fewer bytes on the wire than the agent has.
    const auto& packed = with_sftp.result["sandboxes"][0]["facts"]["isoprobe_upload"];
    CHECK(packed["packing"] == "xz");
    CHECK(packed["compressed_bytes"].get<std::size_t>() > 0);
    CHECK(packed["compressed_bytes"].get<std::size_t>() < packed["bytes"].get<std::size_t>());

    cfg.command.out_dir = dir.path + "/exec-" + runtime;
    cfg.test_weakenings = {"sshd:no-sftp"};
    auto without = runner::run(cfg);
    INFO(runtime << " without SFTP: " << without.result["summary"].dump());
    CHECK(without.exit_code == kExitPass);
    CHECK(without.result["summary"]["verdict"] == "pass");
    REQUIRE(without.result["sandboxes"].size() == 1);
    const json& s = without.result["sandboxes"][0];
    CHECK(s["runtime"] == runtime);
    CHECK(s["error"].is_null());
    CHECK(s["facts"]["test_weakenings"][0] == "sshd:no-sftp");
    CHECK(s["facts"]["isoprobe_upload_via"] == "exec");
    const auto checks = checks_of(without.result);
    CHECK(checks == checks_of(with_sftp.result));
    REQUIRE(checks.count("agent_upload") == 1);
    CHECK(checks.at("agent_upload") == "pass");
    CHECK(failed_controls(without.result).empty());
  }
}

// Other evals' sandboxes (docs/CONTRACTS.md §4.5): with four sandboxes of two eval sets live
// at once, each tries others on 2222 and the peer-serve port, and each peer's record
// witnesses the silence.
TEST_CASE("run: sandboxes of other evals live at once cannot reach each other, witnessed", "[system][run]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto r = run_command({isoharness_bin(), "run", scenarios() + "/mixed.yaml", scenarios() + "/standard.yaml",
                        "--scenarios-dir", scenarios(), "--runtimes", "runc", "--attempts", "1", "--parallel",
                        "4", "--out", dir.path},
                       RunOptions{.deadline = std::chrono::minutes(15)});
  REQUIRE(r.has_value());
  INFO(r->err.substr(r->err.size() > 4000 ? r->err.size() - 4000 : 0));
  CHECK(r->exit_code == 0);
  const json result = read_json(dir.path + "/result.json");
  int judged = 0;  // sandboxes whose two peer checks passed
  std::set<std::string> scenarios_with_peers;
  for (const auto& s : result["sandboxes"]) {
    INFO(s["id"] << " " << s.value("peers", json()).dump());
    REQUIRE(s.contains("peers"));
    std::map<std::string, std::string> status;
    for (const auto& c : s["checks"])
      if (c["control"].get<std::string>().rfind("peers", 0) == 0)
        status[c["control"].get<std::string>()] = c["status"].get<std::string>();
    // Every sandbox has its peer checks, or the one that says it had no live peer.
    CHECK((status.count("peers:tcp-2222") == 1 || status["peers"] == "n/a"));
    for (const auto& [control, st] : status) CHECK(st != "fail");
    if (status["peers:tcp-2222"] == "pass" && status["peers:serve-port"] == "pass") {
      ++judged;
      scenarios_with_peers.insert(s["scenario"].get<std::string>());
      for (const auto& p : s["peers"]["peers"]) CHECK(p["serve_seen"] == true);
    }
  }
  CHECK(judged >= 2);
  CHECK(scenarios_with_peers.size() == 2);
}

// Every sandbox of a world sits behind the same jumphost (as every eval on a platform sits
// behind its shared jumphost): two sandboxes live at once go through one jump connection,
// each with its own session to its own sandbox.
TEST_CASE("run: two sandboxes behind one jumphost share one jump connection", "[system][run]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  auto profile = scenario::load_deployment(scenarios() + "/deployments/local.yaml");
  const std::string run_id = runner::random_run_id();
  runner::RunKey key(run_id);
  auto backend =
      deploy::make_backend(scenario::BackendKind::local, profile, {run_id, dir.path, false, nullptr});
  runner::RunSettings settings;
  settings.run_id = run_id;
  settings.credentials.private_key_path = key.private_path();
  settings.credentials.public_key_path = key.public_path();
  settings.public_key_line = key.public_line();
  settings.isoprobe_bundle = bundle();
  runner::RunState state;
  runner::JumpPool jumps(settings.credentials, settings.host_key_policy, false, nullptr);
  runner::Journal journal(dir.path + "/journal", {{"schema", "isoharness.result/v1"}});
  const runner::JobContext ctx{settings, *backend, journal, jumps, state};
  {
    auto planned = runner::plan_scenarios({scenarios() + "/standard.yaml"}, profile, false);
    REQUIRE_FALSE(planned.front().items.empty());
    const runner::PlanItemPtr& item = planned.front().items.front();
    runner::Job job{planned.front().scenario.name, item, "runc", "tier", 1};
    runner::LiveSandbox a(ctx, runner::make_request(job, 1, "sharea", settings));
    runner::LiveSandbox b(ctx, runner::make_request(job, 2, "shareb", settings));
    const auto& ra = a.handle().route;
    const auto& rb = b.handle().route;
    CHECK(ra.jump.host == rb.jump.host);
    CHECK(ra.jump.port == rb.jump.port);
    CHECK(ra.jump.user == rb.jump.user);
    CHECK(ra.sandbox.host + std::to_string(ra.sandbox.port) !=
          rb.sandbox.host + std::to_string(rb.sandbox.port));
    auto& sa = a.connect(std::chrono::seconds(60));
    auto& sb = b.connect(std::chrono::seconds(60));
    for (auto* s : {&sa, &sb}) {
      auto r = s->exec({"hostname"}, std::chrono::seconds(30), 4096);
      REQUIRE(r.has_value());
      CHECK(r->exit_code == 0);
    }
    CHECK(jumps.connections_opened() == 1);
  }
  jumps.close();
  backend.reset();
  CHECK(test::local::leftovers_of("/run/isoharness", run_id).empty());
}
