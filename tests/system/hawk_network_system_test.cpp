// Other evals as a cluster holds them, through the hawk stand-in (tests/hawk_standin/hawk):
// every eval's sandbox on one network (the stand-in's default, HAWK_STANDIN_NETWORK=shared:
// one `local up --serve` world that every eval's `local up --join` enters), so the peer
// checks are judged, not n/a; and the platform's own ingress rules as the stand-in writes
// them (HAWK_STANDIN_INGRESS, docs/CONTRACTS.md §4.5): the per-sample rule opening TCP 2222
// fromEntities [all] fails peers:tcp-2222 under strict, naming the rule's shape, unless the
// profile accepts that check by name; an ingress "deny" that allows all fails
// peers:serve-port.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "harness/common/subprocess.h"
#include "harness/deploy/local/run_state.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::test::local;
namespace dl = isoharness::deploy::local;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> kPrograms = {"runc", "runsc",   "sshd", "ssh",     "ssh-keygen",
                                            "nft",  "dnsmasq", "ip",   "nsenter", "python3"};

std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}
std::string standin() {
  return test::source_dir() + "/tests/hawk_standin/hawk";
}

// Two eval sets of two strict items each: four gVisor sandboxes live at once.
void write_scenario(const std::string& path, const std::string& name) {
  std::ofstream(path) << "name: " << name << "\neval_set:\n  name: " << name
                      << "-set\n  isolation: strict\n  tasks:\n"
                         "    - package: git+https://git.example.com/evals/cyber-tasks@v1.2.0\n"
                         "      name: cyber_recon\n      items:\n"
                         "        - { name: one, args: { target_profile: small } }\n"
                         "        - { name: two, args: { target_profile: large } }\n"
                         "  models:\n    - package: openai\n      items: [{ name: gpt-4o-mini }]\n"
                         "sandbox_defaults:\n  image: registry.example.com/evals/cyber-task:v1\n"
                         "  image_user: root\n"
                         "matrix: { runtimes: [gvisor], node_classes: [tier], attempts: 1 }\n";
}

struct Night {
  ScratchDir dir;
  std::string state = dir.path + "/standin";
  std::string profile = dir.path + "/standin.yaml";
  std::vector<std::string> scenarios = {dir.path + "/night-a.yaml", dir.path + "/night-b.yaml"};

  Night() {
    test::require_system(kPrograms);
    const std::string pub = make_login_key(dir.path);
    auto r = run_command({standin(), "human", "register", "--name", "alice", "--ssh-key", pub},
                         {.env_set = env("none")});
    REQUIRE(r);
    REQUIRE(r->ok());
    write_scenario(scenarios[0], "night-a");
    write_scenario(scenarios[1], "night-b");
  }
  void write_profile(const std::string& accepted) const {
    std::ofstream(profile) << "name: standin\nbackend: hawk\nruntime_classes: [gvisor]\n"
                              "sandbox_runtime_class: gvisor\nsandbox_runtime_class_is_default: false\n"
                              "runtime_handlers: { gvisor: runsc }\n"
                              "node_mounts: [/usr, /etc/alternatives]\nhawk:\n  cli: "
                           << standin() << "\n  human: alice\n  identity_file: " << dir.path
                           << "/id_ed25519\n  sandbox_host_keys: first-use\n  start_timeout_s: 300\n"
                              "node_classes:\n  tier: { env: { HAWK_STANDIN_NODE_CLASS: tier } }\n"
                              "witness: none\nnode_view: none\negress_deadline_ms: 1500\n"
                           << accepted;
  }
  std::map<std::string, std::string> env(const std::string& ingress) const {
    return {{"HAWK_STANDIN_STATE", state},
            {"HAWK_STANDIN_ISOHARNESS", isoharness_bin()},
            {"HAWK_STANDIN_PROFILE", test::source_dir() + "/scenarios/deployments/local.yaml"},
            {"HAWK_STANDIN_INGRESS", ingress}};
  }
  RunResult run(const std::string& out, const std::string& ingress, const std::string& accepted = "") const {
    write_profile(accepted);
    std::vector<std::string> argv = {isoharness_bin(),
                                     "run",
                                     "--backend",
                                     "hawk",
                                     "--deployment",
                                     profile,
                                     "--out",
                                     out,
                                     "--isoprobe-bundle",
                                     test::binary_dir() + "/probes/isoprobe-bundle",
                                     "--accept-new-host-keys",
                                     "--attempts",
                                     "1",
                                     "--node-classes",
                                     "tier",
                                     "--parallel",
                                     "4"};
    argv.insert(argv.end(), scenarios.begin(), scenarios.end());
    auto r = run_command(argv, {.deadline = 1500s, .env_set = env(ingress), .merge_stderr = true});
    REQUIRE(r);
    return *r;
  }
  // The stand-in's starts since `from` (events.jsonl line index): eval -> local run id.
  std::map<std::string, std::string> starts(std::size_t& from) const {
    std::map<std::string, std::string> out;
    std::ifstream in(state + "/events.jsonl");
    std::size_t n = 0;
    for (std::string line; std::getline(in, line); ++n) {
      if (n < from) continue;
      const json e = json::parse(line);
      if (e["event"] == "start") out[e["id"]] = e["run_id"];
    }
    from = n;
    return out;
  }
  // Every eval of the run shared one world, and nothing of it is left.
  void require_one_network_gone(std::size_t& from) const {
    const auto evals = starts(from);
    REQUIRE(evals.size() == 4);
    std::set<std::string> worlds;
    for (const auto& [id, run] : evals) worlds.insert(run);
    CHECK(worlds.size() == 1);
    for (const auto& run : worlds) CHECK(leftovers_of(dl::kDefaultStateRoot, run).empty());
    std::error_code ec;
    CHECK((!std::filesystem::exists(state + "/evals") || std::filesystem::is_empty(state + "/evals", ec)));
    CHECK_FALSE(std::filesystem::exists(state + "/world"));
  }
};

json result_in(const std::string& out) {
  return json::parse(test::read_text(out + "/result.json"));
}

// Every peer check of every sandbox: sandbox id -> control -> check.
std::map<std::string, std::map<std::string, json>> peer_checks(const json& result) {
  std::map<std::string, std::map<std::string, json>> out;
  for (const auto& s : result["sandboxes"])
    for (const auto& c : s["checks"])
      if (c["control"].get<std::string>().rfind("peers", 0) == 0) out[s["id"]][c["control"]] = c;
  return out;
}

int count_status(const json& result, const std::string& control, const std::string& status) {
  int n = 0;
  for (const auto& [id, checks] : peer_checks(result))
    if (checks.count(control) && checks.at(control)["status"] == status) ++n;
  return n;
}

}  // namespace

TEST_CASE("hawk: every eval on one network; the platform's ingress rules fail the peer checks",
          "[system][hawk]") {
  Night night;
  std::size_t events = 0;

  SECTION("a clean platform: the peer checks are judged and pass") {
    const RunResult r = night.run(night.dir.path + "/clean", "none");
    INFO(r.out.substr(r.out.size() > 6000 ? r.out.size() - 6000 : 0));
    CHECK(r.exit_code == 0);
    const json result = result_in(night.dir.path + "/clean");
    CHECK(count_status(result, "peers:tcp-2222", "fail") == 0);
    CHECK(count_status(result, "peers:serve-port", "fail") == 0);
    CHECK(count_status(result, "peers:tcp-2222", "pass") >= 2);
    CHECK(count_status(result, "peers:serve-port", "pass") >= 2);
    for (const auto& s : result["sandboxes"])
      for (const auto& peer : s.value("peers", json::object()).value("peers", json::array()))
        CHECK(peer.value("separate_network", std::string()).empty());
    night.require_one_network_gone(events);
  }

  SECTION(
      "the per-sample 2222 rule: strict fails peers:tcp-2222 naming the rule; accepted by name it passes") {
    const RunResult r = night.run(night.dir.path + "/ssh", "tcp-2222-from-all");
    INFO(r.out.substr(r.out.size() > 6000 ? r.out.size() - 6000 : 0));
    CHECK(r.exit_code == 1);
    const json result = result_in(night.dir.path + "/ssh");
    CHECK(count_status(result, "peers:tcp-2222", "fail") >= 1);
    CHECK(count_status(result, "peers:serve-port", "fail") == 0);  // 2222 only
    for (const auto& [id, checks] : peer_checks(result))
      if (checks.count("peers:tcp-2222") && checks.at("peers:tcp-2222")["status"] == "fail")
        CHECK_THAT(
            checks.at("peers:tcp-2222")["reason"].get<std::string>(),
            Catch::Contains("rule shape: ingress to service 'default' on TCP 2222 from other evals' pods") &&
                Catch::Contains("fromEntities [all]"));
    night.require_one_network_gone(events);

    const std::string why = "the platform opens the human baseliner's sshd to every entity";
    const RunResult accepted =
        night.run(night.dir.path + "/accepted", "tcp-2222-from-all",
                  "accepted_risks:\n  - check: peers:tcp-2222\n    reason: " + why + "\n");
    INFO(accepted.out.substr(accepted.out.size() > 6000 ? accepted.out.size() - 6000 : 0));
    CHECK(accepted.exit_code == 0);
    const json ok = result_in(night.dir.path + "/accepted");
    CHECK(count_status(ok, "peers:tcp-2222", "fail") == 0);
    int known = 0;
    for (const auto& [id, checks] : peer_checks(ok))
      if (checks.count("peers:tcp-2222") &&
          checks.at("peers:tcp-2222")["reason"].get<std::string>().starts_with("known risk: accepted by the "
                                                                               "deployment profile (" +
                                                                               why + ")"))
        ++known;
    CHECK(known >= 1);
    CHECK(ok["summary"]["known_risks"].get<int>() == known);
    // Every report shows it: report.md's known risks, junit's properties, the summary line.
    const std::string md = test::read_text(night.dir.path + "/accepted/report.md");
    CHECK_THAT(md, Catch::Contains("known_risk:peers:tcp-2222") && Catch::Contains(why));
    std::string why_xml;  // junit.xml writes the reason as an XML attribute: ' is &apos;
    for (const char ch : why) why_xml += ch == '\'' ? std::string("&apos;") : std::string(1, ch);
    CHECK_THAT(test::read_text(night.dir.path + "/accepted/junit.xml"),
               Catch::Contains("known_risk:peers:tcp-2222") && Catch::Contains(why_xml));
    CHECK_THAT(accepted.out, Catch::Contains("known risks the profile accepts"));
    night.require_one_network_gone(events);
  }

  SECTION("an ingress deny that allows all: peers:serve-port fails") {
    const RunResult r = night.run(night.dir.path + "/all", "allow-all");
    INFO(r.out.substr(r.out.size() > 6000 ? r.out.size() - 6000 : 0));
    CHECK(r.exit_code == 1);
    const json result = result_in(night.dir.path + "/all");
    CHECK(count_status(result, "peers:serve-port", "fail") >= 1);
    for (const auto& [id, checks] : peer_checks(result))
      if (checks.count("peers:serve-port") && checks.at("peers:serve-port")["status"] == "fail")
        CHECK_THAT(checks.at("peers:serve-port")["reason"].get<std::string>(),
                   Catch::Contains("on every port") && Catch::Contains("`ingress: - {}`"));
    night.require_one_network_gone(events);
  }
}
