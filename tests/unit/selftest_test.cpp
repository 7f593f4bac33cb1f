// harness/selftest and the local backend's weakenings, without sandboxes: the catalogue
// meets verify's control names and the backend's weakening names, jobs and n/a reasons,
// judging (caught, missed, false alarm, error, a disabled check), the renderers, and what
// each backend weakening changes in the nft script and the OCI spec.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "harness/common/error.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/oci_spec.h"
#include "harness/deploy/local/weakenings.h"
#include "harness/selftest/catalogue.h"
#include "harness/selftest/detection.h"
#include "harness/selftest/selftest_jobs.h"
#include "harness/verify/peer_checks.h"
#include "harness/verify/verify.h"
#include "reports/selftest_reports.h"
#include "tests/unit/policy_test_util.h"

using namespace isoharness;
using namespace isoharness::selftest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Every control verify can name for a strict, non_root, read_only_root item probed against
// the local world's targets and the peer: an empty posture makes each check fail by name.
std::set<std::string> verify_controls() {
  // The expect block the planner writes for strict (the keys verify reads, and no others).
  const auto plan = test::plan_yaml(
      "eval_set:\n  isolation: {level: strict, non_root: true, read_only_root: true}\n  tasks:\n"
      "    - name: t\n      items:\n        - name: i\n");
  REQUIRE(plan.accepted());
  const json expect = plan.items[0].expect;
  // Capabilities observed (the per-capability checks need them); everything else missing.
  json posture = {{"observations",
                   {{{"name", "capabilities"},
                     {"status", "ok"},
                     {"value", {{"eff", "0000000000000000"}, {"bnd", "0000000000000000"}}}}}}};
  verify::HostFacts host;
  std::vector<deploy::EgressTarget> targets;
  for (const char* t : {"target", "target-addr", "blocked", "blocked-addr", "dns", "resolver", "metadata",
                        "cluster-api", "jumphost", kPeerTarget, kPeerTarget6})
    targets.push_back({t, "203.0.113.10", 80, "tcp", "", "internet"});
  // and every target of the local world (the witnessed ways out among them), by its name
  for (auto t : deploy::local::world_targets()) {
    t.witness_address.clear();  // judged here without a witness: only the control names matter
    targets.push_back(std::move(t));
  }
  // and the targets every item adds (the allow list's unlisted port among them)
  for (auto t : deploy::local::domain_port_targets(expect)) {
    t.witness_address.clear();
    targets.push_back(std::move(t));
  }
  std::set<std::string> names = {"fresh_sandbox"};  // checked by the runner, not by verify_sandbox
  for (const auto& c : verify::verify_sandbox(
           {expect, posture, host, targets, policy::Level::strict, nullptr, false, nullptr, true}))
    names.insert(c.control);
  // and the peer checks of the runner's peer phase, by the names verify_peers gives them
  verify::PeerObservation peers;
  peers.reach_answered = true;
  peers.peers.push_back({"peer", "i", "s", {"192.0.2.9"}, {}, ""});
  peers.tries = {{"a", 0, verify::PeerPort::ssh, "192.0.2.9"},
                 {"b", 0, verify::PeerPort::serve, "192.0.2.9"}};
  for (const auto& c : verify::verify_peers(peers)) names.insert(c.control);
  return names;
}

runner::Job base_job(const std::string& runtime) {
  json values = {{"services", {{"default", {{"securityContext", {{"capabilities", {{"drop", {"ALL"}}}}}}}}}}};
  values["services"]["default"]["runtimeClassName"] = runtime == "gvisor" ? "gvisor" : "CLUSTER_DEFAULT";
  auto item = std::make_shared<policy::PlanItem>();
  item->id = "item-" + runtime;
  item->values = values;
  return {"selftest-hardened", item, runtime, "tier", 1, {}};
}

json record(const std::string& id, const std::string& runtime, const std::vector<std::string>& weakenings,
            const std::vector<std::string>& failed, json error = nullptr) {
  json checks = json::array({{{"control", "kernel"}, {"status", "pass"}}});
  // Failed by the sandbox's posture report and by the node's view (verify's typed judges).
  for (const auto& f : failed)
    checks.push_back({{"control", f}, {"status", "fail"}, {"judges", {"posture", "node"}}});
  json r = {{"id", id}, {"runtime", runtime}, {"attempt", 1}, {"checks", checks}, {"error", error}};
  if (!weakenings.empty()) r["weakenings"] = weakenings;
  return r;
}

json result_with(const json& section) {
  return {{"run", {{"id", "abc123"}}}, {"context", {{"host", "box"}}}, {"selftest", section}};
}

}  // namespace

TEST_CASE("every weakening names controls verify has and backend weakenings the local backend knows",
          "[selftest]") {
  const auto controls = verify_controls();
  for (const auto& w : catalogue()) {
    INFO(w.name);
    CHECK_FALSE(w.caught_by.empty());
    CHECK_NOTHROW(deploy::local::check_weakenings(w.backend, w.name));
    const bool applicable_somewhere = w.not_applicable("runc").empty() || w.not_applicable("gvisor").empty();
    if (!applicable_somewhere) continue;
    CHECK((w.edit_values || w.edit_item_values || !w.backend.empty()));
    for (const auto& c : w.caught_by) {
      INFO(c);
      CHECK(controls.count(c) == 1);
    }
  }
}

TEST_CASE("selecting weakenings: by name, the quick subset, and unknown names refused together",
          "[selftest]") {
  CHECK(select({}, false).size() == catalogue().size());
  auto quick = select({}, true);
  CHECK(quick.size() >= 3);
  CHECK(quick.size() < catalogue().size());
  for (const auto* w : quick) CHECK(w->quick);
  auto two = select({"egress_metadata", "cap_sys_admin_kept"}, false);
  REQUIRE(two.size() == 2);
  CHECK(two[0]->name == "cap_sys_admin_kept");  // catalogue order
  try {
    select({"egress_metadata", "no_such_thing", "nor_this"}, false);
    FAIL("unknown names accepted");
  } catch (const UserError& e) {
    std::string m = e.what();
    CHECK(m.find("no_such_thing, nor_this") != std::string::npos);
    CHECK(m.find("cap_sys_admin_kept") != std::string::npos);
  }
}

TEST_CASE("jobs: a clean control per runtime, weakened copies, and the reasons for what is not applied",
          "[selftest]") {
  auto chosen = select({"privilege_escalation_allowed", "runc_instead_of_gvisor", "attempt_disk_reused",
                        "other_sandbox_reachable"},
                       false);
  auto jobs = make_jobs({base_job("runc"), base_job("gvisor")}, {}, {"runc", "gvisor"}, chosen);
  CHECK(jobs.not_applicable.count({"privilege_escalation_allowed", "gvisor"}) == 1);
  CHECK(jobs.not_applicable.count({"runc_instead_of_gvisor", "runc"}) == 1);
  CHECK(jobs.not_applicable.count({"privilege_escalation_allowed", "runc"}) == 0);
  CHECK(jobs.needs_peer);
  // 2 clean + privesc(runc) + runc_instead(gvisor) + disk(runc, gvisor) + peer(runc, gvisor)
  REQUIRE(jobs.jobs.size() == 8);
  CHECK(jobs.jobs[0].weakenings.empty());
  CHECK(jobs.jobs[0].attempts == 2);  // as many attempts as attempt_disk_reused
  CHECK(jobs.jobs[2].weakenings == std::vector<std::string>{"attempt_disk_reused"});

  std::vector<runner::Skipped> skipped = {{"selftest-hardened", "gpu-item", "gvisor", "a GPU stays on runc"}};
  auto only_runc =
      make_jobs({base_job("runc")}, skipped, {"runc", "gvisor"}, select({"egress_metadata"}, false));
  REQUIRE(only_runc.not_applicable.count({"egress_metadata", "gvisor"}) == 1);
  CHECK(only_runc.not_applicable.at({"egress_metadata", "gvisor"}).find("a GPU stays on runc") !=
        std::string::npos);
  CHECK(only_runc.jobs.size() == 2);
}

TEST_CASE("applying weakenings edits the values after planning and names the backend's", "[selftest]") {
  json values = base_job("gvisor").item->values.get();
  std::vector<std::string> backend;
  apply_weakenings({"cap_sys_admin_kept", "runc_instead_of_gvisor", "egress_metadata"}, values, backend);
  const json& svc = values["services"]["default"];
  CHECK(svc["securityContext"]["capabilities"]["add"] == json::array({"SYS_ADMIN"}));
  CHECK(svc["runtimeClassName"] == "CLUSTER_DEFAULT");
  CHECK(backend == std::vector<std::string>{"nft:allow-metadata"});
  CHECK_THROWS_AS(apply_weakenings({"made_up"}, values, backend), InfraError);
}

TEST_CASE("every posture weakening is to be caught by the node's view of the sandbox", "[selftest]") {
  int posture = 0;
  for (const auto& w : catalogue()) {
    const bool node_sees = std::any_of(w.caught_by.begin(), w.caught_by.end(), verify::node_judged);
    const bool any_egress = std::any_of(w.caught_by.begin(), w.caught_by.end(),
                                        [](const std::string& c) { return c.rfind("egress:", 0) == 0; });
    INFO(w.name);
    if (w.judge == kJudgeNode) {
      ++posture;
      CHECK(node_sees);  // a node judge needs a check the node's view judges
    } else if (node_sees && !any_egress && w.judge != kJudgeEvidence) {
      FAIL_CHECK("a posture weakening the node can judge names the judge " << w.judge);
    }
  }
  CHECK(posture >= 20);
}

TEST_CASE("judging: caught, missed, false alarm, error, and a disabled check", "[selftest]") {
  json sandboxes = json::array({
      record("s1", "runc", {}, {}),
      record("s2", "runc", {"cap_sys_admin_kept"}, {"capability:CAP_SYS_ADMIN", "capabilities"}),
      record("s3", "runc", {"egress_metadata"}, {"kubernetes_credentials"}),
      record("s4", "gvisor", {}, {"seccomp"}),
      record("s5", "gvisor", {"cap_sys_admin_kept"}, {}, "deploy failed: runsc exited"),
  });
  JudgeInput in{select({"cap_sys_admin_kept", "egress_metadata"}, false),
                {"runc", "gvisor"},
                {{{"egress_metadata", "gvisor"}, "not here"}},
                &sandboxes,
                {}};
  json s = judge(in);
  const auto& cap = s["weakenings"][0]["cells"];
  CHECK(cap["runc"]["status"] == "caught");
  CHECK(cap["runc"]["caught_by"] == json::array({"capability:CAP_SYS_ADMIN", "capabilities"}));
  CHECK(cap["gvisor"]["status"] == "error");
  const auto& meta = s["weakenings"][1]["cells"];
  CHECK(meta["runc"]["status"] == "missed");
  CHECK(meta["runc"]["reason"].get<std::string>().find("kubernetes_credentials") != std::string::npos);
  CHECK(meta["gvisor"]["status"] == "n/a");
  CHECK(s["clean"][0]["status"] == "clean");
  CHECK(s["clean"][1]["status"] == "false_alarm");
  CHECK(s["summary"]["missed"] == json::array({"egress_metadata (runc)"}));
  CHECK(s["summary"]["false_alarms"] == json::array({"gvisor"}));
  CHECK(s["summary"]["verdict"] == "error");
  CHECK(exit_code_of(s) == kExitInfrastructure);

  // Without the broken sandboxes, the verdict is fail; a disabled check turns a catch into a miss.
  json good = json::array({sandboxes[0], sandboxes[1]});
  JudgeInput only_cap{select({"cap_sys_admin_kept"}, false), {"runc"}, {}, &good, {}};
  CHECK(exit_code_of(judge(only_cap)) == kExitPass);
  CHECK(judge(only_cap)["summary"]["per_runtime"]["runc"]["catch_rate"] == 1.0);
  only_cap.disabled_checks = {"capability*", "capabilities"};
  json without = judge(only_cap);
  CHECK(without["weakenings"][0]["cells"]["runc"]["status"] == "missed");
  CHECK(exit_code_of(without) == kExitVerdictFailed);
  CHECK(is_disabled("egress:metadata", {"egress:*"}));
  CHECK_FALSE(is_disabled("egress:metadata", {"egress"}));
}

TEST_CASE("judging: a weakening is caught only by the judge its entry names", "[selftest]") {
  // egress_udp_open must be caught by the outside witness; the sandbox's own admission of a
  // blocked target that connected is another judge.
  // The judges are the check's own (verify's CheckResult::judges), never read from its words.
  auto egress = [](const std::string& id, const std::string& observed, const json& judges) {
    json r = record(id, "runc", {"egress_udp_open"}, {});
    r["checks"].push_back({{"control", "egress:canary-udp"},
                           {"status", "fail"},
                           {"expected", "blocked"},
                           {"observed", observed},
                           {"judges", judges}});
    return r;
  };
  json by_sandbox = json::array(
      {record("c", "runc", {}, {}),
       egress("w", "arrived, no drop record; sandbox reported connected", json::array({"sandbox report"}))});
  JudgeInput in{select({"egress_udp_open"}, false), {"runc"}, {}, &by_sandbox, {}};
  json s = judge(in);
  const auto& cell = s["weakenings"][0]["cells"]["runc"];
  CHECK(s["weakenings"][0]["judge"] == "witness");
  CHECK(cell["status"] == "missed");
  CHECK_THAT(cell["reason"].get<std::string>(), Catch::Contains("not by its judge (witness)"));
  CHECK(cell["judges"]["egress:canary-udp"] == json::array({"sandbox report"}));

  json by_both = json::array(
      {record("c", "runc", {}, {}), egress("w", "arrived, no drop record; sandbox reported connected",
                                           json::array({"witness", "sandbox report"}))});
  in.sandboxes = &by_both;
  json both = judge(in);
  CHECK(both["weakenings"][0]["cells"]["runc"]["status"] == "caught");
  CHECK(both["weakenings"][0]["cells"]["runc"]["judges"]["egress:canary-udp"] ==
        json::array({"sandbox report", "witness"}));

  // An unwitnessed check is neither caught nor clean: the harness lacked its evidence.
  json blind = json::array({record("c", "runc", {}, {}), record("w", "runc", {"egress_udp_open"}, {})});
  blind[1]["checks"].push_back({{"control", "egress:canary-udp"}, {"status", "unwitnessed"}});
  blind[0]["checks"].push_back({{"control", "egress:canary-tcp"}, {"status", "unwitnessed"}});
  in.sandboxes = &blind;
  json unw = judge(in);
  CHECK(unw["weakenings"][0]["cells"]["runc"]["status"] == "error");
  CHECK(unw["clean"][0]["status"] == "error");
  CHECK(exit_code_of(unw) == kExitInfrastructure);
  CHECK(judges_of({{"control", "kernel"}, {"status", "fail"}, {"judges", {"posture"}}}) ==
        std::vector<std::string>{"posture"});
  CHECK(judges_of({{"control", "kernel"}, {"status", "fail"}, {"judges", {"node", "oracle", 7}}}) ==
        std::vector<std::string>{"node"});  // a label no judge has names none
  CHECK(judges_of({{"control", "kernel"}, {"status", "fail"}}).empty());
  CHECK(judges_of({{"control", "kernel"}, {"status", "pass"}, {"judges", {"posture"}}}).empty());
}

TEST_CASE("judging the verifier's own evidence: caught only when nothing that needed it passed",
          "[selftest]") {
  const auto chosen = select({"witness_flooded"}, false);
  REQUIRE(chosen.size() == 1);
  CHECK(chosen[0]->judge == kJudgeEvidence);
  CHECK_FALSE(chosen[0]->alone);
  auto with = [](std::vector<std::pair<std::string, std::string>> statuses) {
    json r = record("w", "runc", {"witness_flooded"}, {});
    for (const auto& [control, status] : statuses)
      r["checks"].push_back({{"control", control}, {"status", status}});
    return json::array({record("c", "runc", {}, {}), r});
  };
  auto cell_of = [&](const json& sandboxes) {
    JudgeInput in{chosen, {"runc"}, {}, &sandboxes, {}};
    return judge(in);
  };
  // Unwitnessed (the witness's record was incomplete) or failed: caught, and selftest passes.
  json caught = cell_of(with({{"egress:canary-tcp", "unwitnessed"},
                              {"egress:canary-udp", "fail"},
                              {"egress:metadata", "pass"}}));  // judged by the drop point alone
  const auto& cell = caught["weakenings"][0]["cells"]["runc"];
  CHECK(cell["status"] == "caught");
  CHECK(cell["judge"] == "evidence");
  CHECK(cell["caught_by"] == json::array({"egress:canary-tcp", "egress:canary-udp"}));
  CHECK(exit_code_of(caught) == 0);
  // One witnessed way out passed on evidence the weakening took away: missed, exit 1.
  json missed = cell_of(with({{"egress:canary-tcp", "unwitnessed"}, {"egress:canary-icmp", "pass"}}));
  const auto& m = missed["weakenings"][0]["cells"]["runc"];
  CHECK(m["status"] == "missed");
  CHECK_THAT(m["reason"].get<std::string>(), Catch::Contains("egress:canary-icmp"));
  CHECK(missed["summary"]["missed"] == json::array({"witness_flooded (runc)"}));
  CHECK(exit_code_of(missed) == kExitVerdictFailed);
  // None of its controls ran: not caught either.
  json none = cell_of(with({{"egress:metadata", "pass"}}));
  CHECK(none["weakenings"][0]["cells"]["runc"]["status"] == "missed");
  CHECK_THAT(none["weakenings"][0]["cells"]["runc"]["reason"].get<std::string>(), Catch::Contains("none of"));
}

TEST_CASE("jobs: a weakening of the run's shared evidence runs alone, after the others", "[selftest]") {
  auto jobs = make_jobs({base_job("runc"), base_job("gvisor")}, {}, {"runc", "gvisor"},
                        select({"witness_killed", "egress_metadata", "witness_log_truncated"}, false));
  REQUIRE(jobs.jobs.size() == 4);  // 2 clean + egress_metadata on each runtime
  for (const auto& j : jobs.jobs) CHECK((j.weakenings.empty() || j.weakenings[0] == "egress_metadata"));
  REQUIRE(jobs.alone.size() == 4);
  for (const auto& j : jobs.alone) CHECK(j.weakenings[0].rfind("witness_", 0) == 0);
  for (const auto* w :
       select({"witness_killed", "witness_log_truncated", "witness_flooded", "agent_sends_nothing"}, false)) {
    INFO(w->name);
    CHECK(w->judge == kJudgeEvidence);
    CHECK_NOTHROW(deploy::local::check_weakenings(w->backend, w->name));
  }
}

TEST_CASE("the selftest renderers show every cell, escape names, and refuse a document without a section",
          "[selftest][reports]") {
  json sandboxes = json::array({record("s1", "runc", {}, {}), record("s2", "runc", {"egress_metadata"}, {})});
  JudgeInput in{select({"egress_metadata", "privilege_escalation_allowed"}, false),
                {"runc", "gvisor"},
                {{{"egress_metadata", "gvisor"}, "no <gvisor> here"},
                 {{"privilege_escalation_allowed", "runc"}, "skip"},
                 {{"privilege_escalation_allowed", "gvisor"}, "skip"},
                 {{"", "gvisor"}, "no item"}},
                &sandboxes,
                {}};
  json result = result_with(judge(in));
  std::string md = reports::render_selftest_markdown(result);
  CHECK(md.find("❌ FAIL") != std::string::npos);
  CHECK(md.find("❌ **missed**") != std::string::npos);
  CHECK(md.find("`egress_metadata` under gvisor: no &lt;gvisor&gt; here") != std::string::npos);
  std::string html = reports::render_selftest_html(result);
  CHECK(html.find("no &lt;gvisor&gt; here") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  std::string junit = reports::render_selftest_junit(result);
  CHECK(
      junit.find("<testsuite name=\"selftest.runc\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\"") !=
      std::string::npos);
  CHECK(junit.find("<failure type=\"missed\"") != std::string::npos);
  CHECK_THROWS_AS(reports::render_selftest_markdown(json{{"run", json::object()}}), UserError);
}

TEST_CASE("local weakenings: unknown names refused, nft accepts come first, OCI edits", "[selftest][local]") {
  using namespace deploy::local;
  try {
    check_weakenings({"nft:allow-metadata", "oci:everything"}, "s9");
    FAIL("unknown weakening accepted");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("oci:everything") != std::string::npos);
  }
  SandboxEgress e{3,
                  "sb3",
                  "192.0.2.196",
                  false,
                  {},
                  {},
                  weakened_egress_accepts({"nft:allow-sandboxes", "nft:allow-dns"})};
  std::string script = sandbox_egress_add("abc", e);
  auto accept = script.find("ip daddr 192.0.2.192/26 accept");
  auto drop = script.find("ip daddr 192.0.2.0/24 goto sb_");
  REQUIRE(accept != std::string::npos);
  REQUIRE(drop != std::string::npos);
  CHECK(accept < drop);
  CHECK(script.find("ip daddr 203.0.113.53 udp dport 53 accept") != std::string::npos);
  CHECK(sandbox_egress_add("abc", SandboxEgress{3, "sb3", "192.0.2.196", false, {}, {}, {}})
            .find("192.0.2.192/26") == std::string::npos);

  SandboxSpec spec;
  spec.scratch = {{"work", "/home/agent"}};
  BundleInputs bi{OciRuntime::runc, "s9", "/var/run/netns/x", "/ih-x", "1", "/usr", {"/usr/sbin/sshd"}, {},
                  nullptr};
  json config = make_oci_config(spec, bi);
  std::string dir = (fs::temp_directory_path() / ("ih-selftest-" + std::to_string(::getpid()))).string();
  fs::create_directories(dir);
  OciWeakeningTarget t{dir, dir + "/shared", "/home/agent", static_cast<std::int64_t>(::getuid()),
                       static_cast<std::int64_t>(::getgid())};
  weaken_oci_config(
      {"oci:host-pid", "oci:host-uts", "oci:runtime-socket", "oci:reused-home", "oci:host-device"}, config,
      t);
  for (const auto& ns : config["linux"]["namespaces"]) {
    CHECK(ns["type"] != "pid");
    CHECK(ns["type"] != "uts");
  }
  CHECK_FALSE(config.contains("hostname"));
  struct stat st {};
  REQUIRE(::stat((dir + "/containerd-run/containerd.sock").c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  int homes = 0;
  for (const auto& m : config["mounts"])
    if (m["destination"] == "/home/agent") {
      ++homes;
      CHECK(m["type"] == "bind");
      CHECK(m["source"] == dir + "/shared");
    }
  CHECK(homes == 1);
  CHECK(fs::is_directory(dir + "/shared"));
  CHECK(config["linux"]["devices"][0]["path"] == "/dev/kmsg");
  CHECK(weakened_shared_dir("/run/x", "strict/item:0") == "/run/x/weakened/strict_item_0");
  fs::remove_all(dir);
}
