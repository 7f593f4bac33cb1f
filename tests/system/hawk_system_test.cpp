// The hawk backend end to end: `isoharness run --backend hawk` drives the stand-in hawk CLI
// (tests/hawk_standin/hawk), which starts a real runc or gVisor sandbox with `isoharness
// local up` per eval. Also what a platform can do wrong (drop the runtime class, never
// bring the sandbox up, answer `Error:`), an interrupted run, and `isoharness check` on a
// sandbox from `local up` given only its `ssh -J` line.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "harness/common/subprocess.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/local_backend.h"
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
std::string scenario_file(const std::string& name) {
  return test::source_dir() + "/scenarios/" + name;
}
std::string bundle() {
  return test::binary_dir() + "/probes/isoprobe-bundle";
}

// A scratch platform: the stand-in's state, a registered human, a deployment profile.
struct Platform {
  ScratchDir dir;
  std::string state = dir.path + "/standin";
  std::string profile = dir.path + "/standin.yaml";
  std::string out = dir.path + "/out";  // where run(scenarios) writes
  std::string mode = "normal";
  std::map<std::string, std::string> env_extra;

  // hardened_class false: the profile configures no hardened runtime class (the stand-in
  // is told the same with HAWK_STANDIN_HARDENED_CLASS).
  int start_timeout_s = 300;
  bool hardened_class = true;
  bool egress = false;  // give the profile an egress: section naming the local world's hosts
  // The witnesses: a witness: section naming each eval's world witness (arrivals) and a
  // hubble: section running the stand-in's `hubble observe` (the drop point). Both off: the
  // profile says `witness: none`.
  bool witness = true;
  bool hubble = true;
  std::string hawk_extra;        // more lines of the profile's hawk: section ("  key: value\n")
  std::string profile_extra;     // more top-level sections of the profile
  std::string agent = bundle();  // what run uploads (--isoprobe-bundle)

  // The token every stand-in eval's witness log server MACs its lines with (written once).
  std::string witness_key_file() const {
    const std::string path = dir.path + "/witness.token";
    if (!std::filesystem::exists(path)) std::ofstream(path) << "standin-witness-token-0123456789\n";
    return path;
  }

  explicit Platform(int start_timeout = 300, bool hardened = true)
      : start_timeout_s(start_timeout), hardened_class(hardened) {
    test::require_system(kPrograms);
    std::string pub = make_login_key(dir.path);
    auto r = run_command({standin(), "human", "register", "--name", "alice", "--ssh-key", pub},
                         {.env_set = env()});
    REQUIRE(r);
    REQUIRE(r->ok());
    write_profile();
    if (!hardened_class) env_extra["HAWK_STANDIN_HARDENED_CLASS"] = "";
  }
  void write_profile() const {
    std::ofstream f(profile);
    f << "name: standin\nbackend: hawk\nruntime_classes: [gvisor]\n"
      << (hardened_class ? "sandbox_runtime_class: gvisor\n" : "")
      << "sandbox_runtime_class_is_default: false\n"
         "runtime_handlers: { gvisor: runsc }\n"
         // the stand-in's sandboxes are local ones: the host's /usr and /etc/alternatives
         "node_mounts: [/usr, /etc/alternatives]\nhawk:\n  cli: "
      << standin() << "\n  human: alice\n  identity_file: " << dir.path
      << "/id_ed25519\n  sandbox_host_keys: first-use\n  start_timeout_s: " << start_timeout_s << "\n"
      << hawk_extra
      << "node_classes:\n  tier: { env: { HAWK_STANDIN_NODE_CLASS: tier } }\n"
         "  non-tier: { env: { HAWK_STANDIN_NODE_CLASS: non-tier } }\n";
    if (egress)
      f << "egress:\n  allowed_domain_port: 443\n  internet_canary: " << dl::world_addr::kBlocked
        << ":80\n  metadata: " << dl::world_addr::kMetadata
        << ":80\n  cluster_api: " << dl::world_addr::kClusterApi << ":443\negress_deadline_ms: 1000\n";
    // The operator's witness: each stand-in eval's world witness, its log served by the
    // eval's own jumphost.
    if (witness)
      f << "witness:\n  canary: " << dl::world_addr::kCanary << "\n  canary6: \"" << dl::world_addr::kCanary6
        << "\"\n  zone: " << dl::kWitnessZone << "\n  log: { http: \"http://jumphost:" << dl::kWitnessLogPort
        << dl::kWitnessLogPath << "\", timeout_s: 10, token_file: " << witness_key_file() << " }\n";
    else if (!hubble)  // a deployment without one says so, and its egress checks rest on the sandboxes'
                       // reports
      f << "witness: none\n";
    // The hawk backend has no view of its nodes yet: posture rests on the sandboxes' reports,
    // and the profile says so (without it every posture check is unwitnessed).
    f << "node_view: none\n";
    // The drop point: the stand-in's Hubble, flows from the kernel's drop records of each
    // eval's world. Its earliest flow of an eval is the sandbox's first SSH connection (at
    // `local up`), so the lead reaches back past a slow start.
    if (hubble)
      f << "hubble:\n  command: [" << standin() << ", hubble, observe, --output, json]\n  timeout_s: 30\n"
        << "  lead_s: 600\n";
    f << profile_extra;
  }
  std::map<std::string, std::string> env() const {
    std::map<std::string, std::string> e = {
        {"HAWK_STANDIN_STATE", state},
        {"HAWK_STANDIN_MODE", mode},
        {"HAWK_STANDIN_ISOHARNESS", isoharness_bin()},
        {"HAWK_STANDIN_PROFILE", scenario_file("deployments/local.yaml")}};
    // Every stand-in eval's witness log server MACs its lines with the token the profile names.
    e[dl::kWitnessKeyEnv] = witness_key_file();
    e.insert(env_extra.begin(), env_extra.end());
    return e;
  }
  std::vector<std::string> run_argv(const std::string& out, const std::vector<std::string>& scenarios) const {
    std::vector<std::string> argv = {isoharness_bin(),
                                     "run",
                                     "--backend",
                                     "hawk",
                                     "--deployment",
                                     profile,
                                     "--out",
                                     out,
                                     "--isoprobe-bundle",
                                     agent,
                                     "--accept-new-host-keys",
                                     "--attempts",
                                     "1",
                                     "--node-classes",
                                     "tier",
                                     "--parallel",
                                     "2"};
    argv.insert(argv.end(), scenarios.begin(), scenarios.end());
    return argv;
  }
  RunResult run(const std::string& out_dir, const std::vector<std::string>& scenarios) const {
    auto r = run_command(run_argv(out_dir, scenarios),
                         {.deadline = 2400s, .env_set = env(), .merge_stderr = true});
    REQUIRE(r);
    return *r;
  }
  RunResult run(const std::vector<std::string>& scenarios) const { return run(out, scenarios); }
  // Every eval the stand-in started, and whether it was deleted.
  std::map<std::string, std::pair<std::string, bool>> evals() const {
    std::map<std::string, std::pair<std::string, bool>> out;
    std::ifstream in(state + "/events.jsonl");
    for (std::string line; std::getline(in, line);) {
      json e = json::parse(line);
      if (e["event"] == "start") out[e["id"]] = {e["run_id"], false};
      if (e["event"] == "delete") out[e["id"]].second = true;
    }
    return out;
  }
  // Nothing of any eval is left: each deleted, its `local up` run gone from the machine.
  void require_nothing_left() const {
    for (const auto& [id, e] : evals()) {
      INFO("eval " << id << " (local run " << e.first << ")");
      CHECK(e.second);
      CHECK(leftovers_of(dl::kDefaultStateRoot, e.first).empty());
    }
    std::error_code ec;  // no evals/ at all: none was ever started
    CHECK((!std::filesystem::exists(state + "/evals") || std::filesystem::is_empty(state + "/evals", ec)));
  }
};

json result_in(const std::string& out) {
  return json::parse(test::read_text(out + "/result.json"));
}

std::vector<std::string> failed_controls(const json& result) {
  std::vector<std::string> out;
  for (const auto& s : result["sandboxes"])
    for (const auto& c : s["checks"])
      if (c["status"] == "fail") out.push_back(c["control"].get<std::string>());
  return out;
}

}  // namespace

namespace {

// `isoharness run` on the local backend with its own output directory (defined below).
RunResult run_local(const std::string& out, const std::string& deployment,
                    const std::vector<std::string>& files, const std::vector<std::string>& extra = {});

// Every default scenario (scenarios/*.yaml: siblings, allow lists, GPU, non_root and
// read_only_root among them), in name order.
std::vector<std::string> default_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(test::source_dir() + "/scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// scenario/item/runtime/node class/attempt -> the sandbox's verdict: "pass", "fail: <controls>"
// or "error"; and the sibling services each sandbox's checks judged.
struct Verdicts {
  std::map<std::string, std::string> by_sandbox;
  std::map<std::string, std::set<std::string>> siblings;
};

Verdicts verdicts_of(const json& result) {
  Verdicts v;
  for (const auto& s : result["sandboxes"]) {
    if (s.contains("refusal")) continue;
    const std::string key = s["scenario"].get<std::string>() + "/" + s["item_id"].get<std::string>() + "/" +
                            s["runtime"].get<std::string>() + "/" + s["node_class"].get<std::string>() + "/" +
                            std::to_string(s["attempt"].get<int>());
    std::string verdict = s["error"].is_null() ? "pass" : "error";
    for (const auto& c : s["checks"]) {
      if (c["status"] == "fail")
        verdict = (verdict == "pass" ? "fail:" : verdict) + " " + c["control"].get<std::string>();
      const std::string control = c["control"].get<std::string>();
      // The wall seen from the agent; the view from inside needs the runtime's exec, which
      // only the local backend has.
      if (control.rfind("sibling:", 0) == 0 && control.find(':', 8) == std::string::npos &&
          c["status"] == "pass")
        v.siblings[key].insert(control);
    }
    v.by_sandbox[key] = verdict;
  }
  return v;
}

}  // namespace

TEST_CASE("every default scenario through the hawk backend gets the verdicts it gets locally",
          "[system][hawk]") {
  Platform p;
  p.egress = true;  // a real deployment's profile: the probes' targets come from its egress: section
  // Judged on the sandboxes' reports: on a deployment, a reachable way out not aimed at the
  // operator's canaries (an allow list's domain) has no arrival witness (rule A2), so the
  // allow-list items would be unwitnessed. The witnesses are the next test case's.
  p.witness = false;
  p.hubble = false;
  p.write_profile();
  const auto scenarios = default_scenarios();
  REQUIRE(scenarios.size() >= 8);
  // The platform reads each task's own sandbox (services, GPU, image user) from the task.
  std::string catalogue;
  for (const auto& s : scenarios) catalogue += (catalogue.empty() ? "" : ",") + s;
  p.env_extra["HAWK_STANDIN_TASKS"] = catalogue;
  RunResult r = p.run(scenarios);
  INFO(r.out);
  CHECK(r.exit_code == 0);
  json result = result_in(p.out);
  CHECK(result["summary"]["verdict"] == "pass");
  std::set<std::string> runtimes;
  bool gpu_seen = false, allowed_seen = false;
  for (const auto& s : result["sandboxes"]) {
    CHECK(s["facts"]["backend"] == "hawk");
    CHECK(s["error"].is_null());
    runtimes.insert(s["runtime"].get<std::string>());
    if (s["scenario"] == "gpu-strict") gpu_seen = true;
    for (const auto& c : s["checks"])
      if (c["control"].get<std::string>().rfind("egress:allowed-", 0) == 0 && c["status"] == "pass")
        allowed_seen = true;
  }
  CHECK(runtimes == std::set<std::string>{"runc", "gvisor"});
  CHECK(gpu_seen);
  CHECK(allowed_seen);  // an allow-list item was verified through the profile's egress targets
  CHECK(result["accepted_host_keys"].size() >= result["summary"]["sandboxes"].get<std::size_t>());
  // Peer checks run here too. Every stand-in eval sits on the platform's one network (the
  // stand-in's default, as a cluster's pods do), so a peer tried is judged: never a failure
  // on a clean platform, never in another network.
  for (const auto& s : result["sandboxes"]) {
    if (s.contains("refusal")) continue;
    INFO(s["id"] << " " << s.value("peers", json()).dump());
    int peer_checks = 0;
    for (const auto& c : s["checks"])
      if (c["control"].get<std::string>().rfind("peers", 0) == 0) {
        ++peer_checks;
        CHECK(c["status"] != "fail");
      }
    CHECK(peer_checks >= 1);
    const json peers = s.value("peers", json::object()).value("peers", json::array());
    for (const auto& peer : peers) CHECK(peer.value("separate_network", std::string()).empty());
  }
  p.require_nothing_left();

  RunResult local = run_local(p.dir.path + "/local", scenario_file("deployments/local.yaml"), scenarios,
                              {"--attempts", "1", "--node-classes", "tier"});
  INFO(local.out);
  CHECK(local.exit_code == 0);
  const Verdicts on_hawk = verdicts_of(result);
  const Verdicts on_local = verdicts_of(result_in(p.dir.path + "/local"));
  CHECK(on_hawk.by_sandbox.size() >= 12);  // every item once, tier only, one attempt
  CHECK(on_hawk.by_sandbox == on_local.by_sandbox);
  CHECK(on_hawk.siblings == on_local.siblings);
  CHECK_FALSE(on_hawk.siblings.empty());
}

TEST_CASE("a platform that drops runtimeClassName fails the kernel check", "[system][hawk]") {
  Platform p;
  p.mode = "drop-runtime-class";
  RunResult r = p.run({scenario_file("strict.yaml")});
  INFO(r.out);
  CHECK(r.exit_code == 1);
  auto failed = failed_controls(result_in(p.out));
  CHECK(std::find(failed.begin(), failed.end(), "kernel") != failed.end());
  CHECK_THAT(r.out, Catch::Contains("kernel"));
  p.require_nothing_left();
}

namespace {

// The profile's kubernetes_api: section naming the stand-in's cluster API.
std::string standin_kubernetes_api() {
  return "kubernetes_api:\n  pods: { command: [" + standin() +
         ", kubectl, get, pods, -n, \"{namespace}\", -l, \"app.kubernetes.io/instance={eval_set_id}\", -o, "
         "json] }\n  runtime_classes: { command: [" +
         standin() + ", kubectl, get, runtimeclasses, -o, json] }\n  network_policies: { command: [" +
         standin() +
         ", kubectl, get, ciliumnetworkpolicies, -n, \"{namespace}\", -o, json] }\n  timeout_s: 30\n";
}

// The strict sandbox's checks by control (the run's only sandbox under gVisor).
std::map<std::string, json> checks_by_control(const json& result) {
  std::map<std::string, json> out;
  int sandboxes = 0;
  for (const auto& s : result["sandboxes"]) {
    if (s.value("runtime", "") != "gvisor") continue;
    ++sandboxes;
    for (const auto& c : s["checks"]) out[c["control"].get<std::string>()] = c;
  }
  REQUIRE(sandboxes == 1);
  return out;
}

}  // namespace

TEST_CASE("a platform that admits its pods on CLUSTER_DEFAULT fails kernel from the API's view",
          "[system][hawk]") {
  Platform p;
  p.mode = "cluster-default";  // inspect-action's runner: every service's runtimeClassName CLUSTER_DEFAULT
  p.profile_extra = standin_kubernetes_api();
  p.write_profile();
  RunResult r = p.run({scenario_file("strict.yaml")});
  INFO(r.out);
  CHECK(r.exit_code == 1);
  const json result = result_in(p.out);
  const auto checks = checks_by_control(result);
  REQUIRE(checks.count("kernel"));
  REQUIRE(checks.count("api:runtime_class"));
  // The sandbox itself reports gVisor (this platform's nodes default to it) ...
  const json& kernel = checks.at("kernel");
  CHECK_THAT(kernel["observed"].get<std::string>(), Catch::Contains("gVisor"));
  // ... and fails, because the admitted pod names no runtime class: both sides named.
  CHECK(kernel["status"] == "fail");
  CHECK_THAT(kernel["reason"].get<std::string>(), Catch::Contains("the sandbox reports"));
  CHECK_THAT(kernel["reason"].get<std::string>(),
             Catch::Contains("the plan sets runtimeClassName 'gvisor'; the API shows no runtimeClassName"));
  CHECK(checks.at("api:runtime_class")["status"] == "fail");
  // Everything else the pod spec says agrees with the plan.
  for (const char* control : {"api:security_context", "api:host_namespaces", "api:host_paths",
                              "api:service_account_token", "api:devices"})
    CHECK(checks.at(control)["status"] == "pass");
  p.require_nothing_left();
}

TEST_CASE(
    "the API's view of a platform that admits the planned class agrees; without the section it is named "
    "absent",
    "[system][hawk]") {
  Platform p;
  p.profile_extra = standin_kubernetes_api();
  p.write_profile();
  RunResult r = p.run({scenario_file("strict.yaml")});
  INFO(r.out);
  CHECK(r.exit_code == 0);
  auto checks = checks_by_control(result_in(p.out));
  CHECK(checks.at("kernel")["status"] == "pass");
  for (const char* control : {"api:runtime_class", "api:security_context", "api:host_namespaces",
                              "api:host_paths", "api:service_account_token", "api:devices"})
    CHECK(checks.at(control)["status"] == "pass");

  p.profile_extra.clear();
  p.write_profile();
  const std::string out2 = p.dir.path + "/out2";
  RunResult r2 = p.run(out2, {scenario_file("strict.yaml")});
  INFO(r2.out);
  CHECK(r2.exit_code == 0);
  checks = checks_by_control(result_in(out2));
  REQUIRE(checks.count("kubernetes_api"));
  CHECK(checks.at("kubernetes_api")["status"] == "n/a");
  CHECK_THAT(checks.at("kubernetes_api")["reason"].get<std::string>(), Catch::Contains("absent"));
  p.require_nothing_left();
}

namespace {

// gvisor-only.yaml's one sandbox on a platform that cannot make it: the run exits 3 and the
// sandbox's error is what it returns.
std::string lone_sandbox_error(Platform& p) {
  RunResult r = p.run({scenario_file("gvisor-only.yaml")});
  INFO(r.out);
  CHECK(r.exit_code == 3);
  json result = result_in(p.out);
  REQUIRE(result["sandboxes"].size() == 1);
  return result["sandboxes"][0]["error"].get<std::string>();
}

}  // namespace

TEST_CASE("a sandbox that never comes up: exit 3 with the pod events, nothing left", "[system][hawk]") {
  Platform p(8);
  p.mode = "never-up";
  const std::string error = lone_sandbox_error(p);
  CHECK_THAT(error, Catch::Contains("no sandbox answered within 8 s"));
  CHECK_THAT(error, Catch::Contains("Pending"));
  CHECK_THAT(error, Catch::Contains("FailedCreatePodSandBox"));
  // The platform's own log lines come with it, marked as such, control characters neutralised.
  CHECK_THAT(error, Catch::Contains("--- platform output: the end of `hawk logs "));
  CHECK_THAT(error, Catch::Contains("[ERROR] sandbox says ?]0;owned??[2J hello"));
  CHECK(error.find('\x1b') == std::string::npos);
  REQUIRE(p.evals().size() == 1);
  p.require_nothing_left();
}

// A sandbox whose making fails on the platform (the stand-in's `local up` exits, here on a
// seam it does not know): its pod is Failed, and that item's error comes as soon as status
// says so, with the pod's state and the platform's log, not after start_timeout_s of asking.
TEST_CASE("a sandbox pod that fails: that item's error with the pod's state, at once", "[system][hawk]") {
  Platform p(900);
  p.env_extra["HAWK_STANDIN_TEST_WEAKENINGS"] = "no-such-weakening";
  const std::string error = lone_sandbox_error(p);
  CHECK_THAT(error, Catch::Contains("the sandbox pod failed"));
  CHECK_THAT(error, Catch::Contains("(Error)"));
  CHECK_THAT(error, Catch::Contains("no-such-weakening"));
  CHECK_THAT(error, !Catch::Contains("no sandbox answered within"));
  p.require_nothing_left();
}

namespace {

// Whether pid is gone (or a zombie waiting for its reaper): nothing of it runs.
bool gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const auto paren = text.rfind(')');
  return paren != std::string::npos && text.substr(paren + 2, 1) == "Z";
}

}  // namespace

namespace {

// A scenario of `items` cheap items, the last of task beta, the others of alpha (below).
std::string cheap_scenario(const std::string& dir, int items);

// Every stand-in that printed a login prompt: its pid and the words it was called with.
std::vector<std::pair<int, json>> login_waits(const Platform& p) {
  std::vector<std::pair<int, json>> out;
  std::ifstream in(p.state + "/events.jsonl");
  for (std::string line; std::getline(in, line);) {
    json e = json::parse(line);
    if (e["event"] == "login_wait") out.emplace_back(e["pid"].get<int>(), e["argv"]);
  }
  return out;
}

}  // namespace

// The real CLI without a valid token prints its device-login prompt and waits for a person:
// on stderr, on stdout (versions before late 2025), or in other words. The run's login
// pre-flight (`hawk auth access-token`, before the first start) meets the prompt, stops that
// call at once and says what to do; no eval is started, nothing waits out a deadline.
TEST_CASE(
    "a hawk CLI that waits for a person to log in: exit 3 in seconds, naming hawk login, nothing started",
    "[system][hawk]") {
  for (const std::string mode : {"needs-login", "needs-login-stdout", "needs-login-reworded"}) {
    Platform p;
    p.mode = mode;
    INFO("HAWK_STANDIN_MODE=" << mode);
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_command(p.run_argv(p.out, {scenario_file("gvisor-only.yaml")}),
                         {.deadline = 240s, .env_set = p.env(), .merge_stderr = true});
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(r);
    INFO(r->out);
    REQUIRE_FALSE(r->timed_out);
    CHECK(took < 30);  // seconds, not the 60 s deadline of the call or the 300 s of a start
    CHECK(r->exit_code == 3);
    CHECK_THAT(r->out, Catch::Contains("needs a person to log in"));
    CHECK_THAT(r->out, Catch::Contains("Run `hawk login` on this machine"));
    CHECK_THAT(r->out, Catch::Contains("login pre-flight failed"));
    CHECK_THAT(r->out, !Catch::Contains("no answer before its deadline"));
    json result = result_in(p.out);
    REQUIRE_FALSE(result["sandboxes"].empty());
    CHECK_THAT(result["sandboxes"][0]["error"].get<std::string>(), Catch::Contains("hawk login"));
    // Only the pre-flight met the prompt, and nothing of it is left running.
    const auto waited = login_waits(p);
    REQUIRE(waited.size() == 1);
    CHECK(waited[0].second == json::array({"auth", "access-token"}));
    CHECK(gone(waited[0].first));
    CHECK(p.evals().empty());
    p.require_nothing_left();
  }
}

// A CLI whose every command would work but whose token is gone: the pre-flight finds no
// usable login and the run stops before any eval is started (without it each start would
// be the first to meet the login).
TEST_CASE("the login pre-flight fails before any eval is started", "[system][hawk]") {
  Platform p;
  p.mode = "logged-out";
  RunResult r = p.run({scenario_file("gvisor-only.yaml")});
  INFO(r.out);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("the login pre-flight failed") && Catch::Contains("hawk login"));
  CHECK(p.evals().empty());
  p.require_nothing_left();
}

// A CLI without `auth access-token`: the run says so and goes on.
TEST_CASE("a CLI with no token command: said, and the run goes on", "[system][hawk]") {
  Platform p;
  p.mode = "no-auth-command";
  RunResult r = p.run({cheap_scenario(p.dir.path, 1)});
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("has no `auth access-token` command"));
  CHECK(p.evals().size() == 1);
  p.require_nothing_left();
}

namespace {

// One item per task: crash, pull, config and sched are held by the stand-in, plain runs.
std::string stuck_scenario(const std::string& dir) {
  std::string path = dir + "/stuck.yaml";
  std::ofstream f(path);
  f << "name: stuck\neval_set:\n  name: stuck\n  isolation: standard\n  tasks:\n";
  for (const char* task : {"crash", "pull", "config", "sched", "plain"})
    f << "    - package: git+https://git.example.com/evals/cheap@v1\n      name: " << task
      << "\n      items:\n        - name: one\n";
  f << "sandbox_defaults:\n  image: registry.example.com/evals/cheap:v1\n  image_user: root\n"
       "matrix: { runtimes: [runc], node_classes: [tier], attempts: 1 }\n";
  return path;
}

}  // namespace

// Sandbox pods that sit short of running, as real ones do, rather than reaching Failed: each
// is its item's error, named by its reason and the pod's last event, within its bound after
// the platform first lists the pod (the grace plus one status interval, 15 s), never the
// start timeout; the other item runs. Before its first pod the status API answers 404, which
// is only "not yet".
TEST_CASE("stuck sandbox pods: each its item's error within its grace, the run goes on", "[system][hawk]") {
  Platform p(900);
  p.env_extra["HAWK_STANDIN_STUCK_TASKS"] =
      "crash=crashloop,pull=imagepull,config=configerror,sched=unschedulable";
  p.env_extra["HAWK_STANDIN_NO_POD_S"] = "20";
  p.hawk_extra = "  stuck_grace_s: 6\n  unschedulable_grace_s: 10\n  crash_loop_restarts: 3\n";
  p.write_profile();
  auto argv = p.run_argv(p.out, {stuck_scenario(p.dir.path)});
  *(std::find(argv.begin(), argv.end(), "--parallel") + 1) = "5";
  auto run = run_command(argv, {.deadline = 900s, .env_set = p.env(), .merge_stderr = true});
  REQUIRE(run);
  INFO(run->out);
  CHECK(run->exit_code == 3);
  const json result = result_in(p.out);
  REQUIRE(result["sandboxes"].size() == 5);
  const std::map<std::string, std::pair<std::string, double>> expected = {
      {"crash", {"CrashLoopBackOff", 6.0}},  // 3 restarts at one per 2 s
      {"pull", {"ImagePullBackOff", 6.0}},
      {"config", {"CreateContainerConfigError", 6.0}},
      {"sched", {"FailedScheduling", 10.0}}};
  constexpr double kInterval = 15, kNoPod = 20, kSlack = 8;
  for (const auto& s : result["sandboxes"]) {
    const std::string task = s["task"];
    INFO("task " << task << ": " << s.dump());
    if (task == "plain") {
      CHECK(s["error"].is_null());  // the 404s before its pod were only "not yet"
      continue;
    }
    REQUIRE(s["error"].is_string());
    const auto& [word, grace] = expected.at(task);
    const std::string error = s["error"];
    CHECK_THAT(error, Catch::Contains("the platform held its sandbox pod: " + word) ||
                          Catch::Contains("the platform held its sandbox pod: ErrImagePull"));
    CHECK_THAT(error, !Catch::Contains("no sandbox answered within"));
    if (task != "crash") CHECK_THAT(error, Catch::Contains("last event "));
    const double held = s["timings"]["hawk_held_s"].get<double>();
    const double stuck = s["timings"]["hawk_stuck_s"].get<double>();
    std::printf("stuck pod %s: hawk_held_s %.1f, hawk_stuck_s %.1f (grace %.0f s)\n", task.c_str(), held,
                stuck, grace);
    CHECK(held < kNoPod + kInterval + grace + kSlack);
    CHECK(stuck < grace + kSlack);
  }
  p.require_nothing_left();
}

// A CLI error is an infrastructure failure (exit 3): the platform did not build what was
// asked, so nothing about isolation was measured; it is not a verdict on a sandbox.
TEST_CASE("the CLI's Error: ends the run with exit 3 and its message", "[system][hawk]") {
  Platform p;
  p.mode = "error";
  RunResult r = p.run({scenario_file("gvisor-only.yaml")});
  INFO(r.out);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("Error: the stand-in platform is unavailable"));
  CHECK(p.evals().empty());
}

TEST_CASE("SIGINT in the middle of a hawk run deletes every started eval", "[system][hawk]") {
  Platform p;
  auto argv = p.run_argv(p.out, {scenario_file("standard.yaml")});
  argv.erase(argv.begin() + 11, argv.begin() + 15);  // every attempt and node class: 8 sandboxes
  auto pid = spawn_detached(argv, p.dir.path + "/run.log", p.env());
  REQUIRE(pid);
  for (int i = 0; i < 3000 && p.evals().size() < 2; ++i) std::this_thread::sleep_for(100ms);
  REQUIRE_FALSE(p.evals().empty());
  std::this_thread::sleep_for(3s);  // somewhere in start, wait or probe
  ::kill(*pid, SIGINT);
  int status = 0;
  for (int i = 0; i < 3000 && ::waitpid(*pid, &status, WNOHANG) != *pid; ++i)
    std::this_thread::sleep_for(100ms);
  INFO(dl::read_file_bounded(p.dir.path + "/run.log"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  const json result = result_in(p.out);
  CHECK(result["summary"]["interrupted"] == true);
  CHECK(result["summary"]["sandboxes"].get<int>() < 8);
  // Every sandbox not run is listed with why: in the result, on the console, in both reports.
  int not_run = 0;
  for (const auto& s : result["skipped"])
    if (s.value("not_run", false)) {
      ++not_run;
      CHECK_THAT(s["reason"].get<std::string>(), Catch::Contains("interrupted by a signal"));
    }
  CHECK(not_run == 8 - result["summary"]["sandboxes"].get<int>());
  CHECK(result["summary"]["not_run"] == not_run);
  if (not_run > 0) {
    CHECK_THAT(dl::read_file_bounded(p.dir.path + "/run.log"), Catch::Contains("not run: "));
    CHECK_THAT(test::read_text(p.out + "/report.md"),
               Catch::Contains("Sandboxes not run (" + std::to_string(not_run) + ")"));
    CHECK_THAT(test::read_text(p.out + "/junit.xml"), Catch::Contains("<error type=\"not_run\""));
  }
  p.require_nothing_left();
}

namespace {

// A scenario of `items` cheap items (isolation standard, run under runc), task "alpha"
// except the last, which is task "beta".
std::string cheap_scenario(const std::string& dir, int items) {
  std::string path = dir + "/cheap.yaml";
  std::ofstream f(path);
  f << "name: cheap\neval_set:\n  name: cheap\n  isolation: standard\n  tasks:\n";
  for (int i = 0; i < items; ++i)
    f << "    - package: git+https://git.example.com/evals/cheap@v1\n      name: "
      << (i + 1 == items ? "beta" : "alpha") << "\n      items:\n        - name: item" << i << "\n";
  f << "sandbox_defaults:\n  image: registry.example.com/evals/cheap:v1\n  image_user: root\n"
       "matrix: { runtimes: [runc], node_classes: [tier], attempts: 1 }\n";
  return path;
}

// Each sandbox record's error (empty when it was checked) by task.
std::map<std::string, std::vector<std::string>> errors_by_task(const json& result) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& s : result["sandboxes"])
    out[s["task"].get<std::string>()].push_back(s["error"].is_null() ? "" : s["error"].get<std::string>());
  return out;
}

}  // namespace

// The platform's live-eval quota is back-pressure: a refused start waits and is tried again.
TEST_CASE("a start refused for the platform's quota waits and is tried again until it passes",
          "[system][hawk]") {
  Platform p;
  p.env_extra["HAWK_STANDIN_MAX_LIVE"] = "1";
  p.hawk_extra = "  max_live_evals: 3\n";  // the profile says more than the platform allows
  // Under a quota of one, each eval's world reuses the last one's jumphost address, so its
  // witness log sits at the URL of the last world's: the harness's read cursor sees the
  // log's identity change and reads the new log from its start, so every check is judged.
  p.write_profile();
  RunResult r = p.run({cheap_scenario(p.dir.path, 3)});
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("parallel 3"));
  CHECK_THAT(r.out, Catch::Contains("the platform's live-eval quota is full; trying again"));
  const json result = result_in(p.out);
  REQUIRE(result["sandboxes"].size() == 3);
  int quota_waits = 0;
  for (const auto& s : result["sandboxes"]) {
    for (const auto& c : s["checks"])  // every check judged; if not, why
      if (c["status"] == "unwitnessed") FAIL_CHECK(c["evidence"].get<std::string>().substr(0, 4000));
    CHECK(s["error"].is_null());
    quota_waits += s["facts"]["hawk_quota_waits"].get<int>();
  }
  CHECK(quota_waits > 0);
  p.require_nothing_left();
}

TEST_CASE("a start that fails twice with 503 is tried again and passes", "[system][hawk]") {
  Platform p;
  p.env_extra["HAWK_STANDIN_START_FAILURES"] = "2";
  RunResult r = p.run({cheap_scenario(p.dir.path, 1)});
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("503 Service Unavailable; trying again"));
  const json result = result_in(p.out);
  REQUIRE(result["sandboxes"].size() == 1);
  CHECK(result["sandboxes"][0]["error"].is_null());
  CHECK(result["sandboxes"][0]["facts"]["hawk_start_tries"] == 3);
  p.require_nothing_left();
}

// One item's start always fails: that item is an error with the platform's own message (exit
// 3), and every other item is still deployed and verified.
TEST_CASE("a start that always fails is that item's error; every other item is verified", "[system][hawk]") {
  Platform p;
  p.env_extra["HAWK_STANDIN_FAIL_TASKS"] = "beta";
  p.hawk_extra = "  start_retries: 1\n";
  p.write_profile();
  RunResult r = p.run({cheap_scenario(p.dir.path, 3)});
  INFO(r.out);
  CHECK(r.exit_code == 3);
  const json result = result_in(p.out);
  REQUIRE(result["sandboxes"].size() == 3);
  auto errors = errors_by_task(result);
  REQUIRE(errors["beta"].size() == 1);
  CHECK_THAT(errors["beta"][0],
             Catch::Contains("(2 tries)") && Catch::Contains("Error: 500 Internal Server Error"));
  REQUIRE(errors["alpha"].size() == 2);
  for (const auto& e : errors["alpha"]) CHECK(e.empty());
  for (const auto& s : result["sandboxes"])
    if (s["task"] == "alpha") CHECK(s["checks"].size() > 10);
  CHECK(result["summary"]["not_run"] == 0);
  CHECK_THAT(test::read_text(p.out + "/junit.xml"), Catch::Contains("500 Internal Server Error"));
  p.require_nothing_left();
}

namespace {

// `isoharness local up` with values from the plan's item, and the JSON it prints when ready.
struct LocalUp {
  ScratchDir dir;
  pid_t pid = -1;
  std::string run_id = "h" + dl::new_run_id().substr(0, 7);
  json info;

  explicit LocalUp(const json& values, const std::vector<std::string>& extra = {}) {
    test::require_system(kPrograms);
    make_login_key(dir.path);
    std::ofstream(dir.path + "/values.json") << values.dump();
    std::vector<std::string> argv = {isoharness_bin(),
                                     "local",
                                     "up",
                                     "--values",
                                     dir.path + "/values.json",
                                     "--run-id",
                                     run_id,
                                     "--authorized-key",
                                     dir.path + "/id_ed25519.pub",
                                     "--identity",
                                     dir.path + "/id_ed25519",
                                     "--json",
                                     "--hold-seconds",
                                     "600"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto started = spawn_detached(argv, dir.path + "/up.log");
    REQUIRE(started);
    pid = *started;
    for (int i = 0; i < 1800 && info.is_null(); ++i) {
      std::string text = dl::read_file_bounded(dir.path + "/up.log");
      for (std::istringstream in(text); std::getline(in, text);)
        if (text.rfind('{', 0) == 0) info = json::parse(text);
      std::this_thread::sleep_for(100ms);
    }
    REQUIRE(info.is_object());
  }
  ~LocalUp() {
    if (pid > 0) terminate_process(pid, 60000ms);
    CHECK(leftovers_of(dl::kDefaultStateRoot, run_id).empty());
  }
};

json plan_item(const std::string& scenario_file) {
  auto r = run_command({isoharness_bin(), "plan", scenario_file, "--format", "json"});
  REQUIRE(r);
  REQUIRE(r->ok());
  return json::parse(r->out)["items"][0];
}

RunResult check(const std::string& scenario_file, const json& item, const std::string& ssh,
                const std::string& out) {
  // A sandbox reached by its ssh line has no witness of its own: the profile says so.
  auto r = run_command({isoharness_bin(), "check", scenario_file, "--item", item["id"].get<std::string>(),
                        "--ssh", ssh, "--out", out, "--isoprobe-bundle", bundle(), "--deployment",
                        test::source_dir() + "/tests/fixtures/deployments/check-no-witness.yaml"},
                       {.deadline = 600s, .merge_stderr = true});
  REQUIRE(r);
  return *r;
}

}  // namespace

namespace {

// OpenSSH's sftp client through the jumphost with local up's keys, a batch of one `pwd`.
RunResult sftp_pwd(const LocalUp& up) {
  const std::string batch = up.dir.path + "/sftp.batch";
  std::ofstream(batch) << "pwd\n";
  const json& jump = up.info["jump"];
  const json& sb = up.info["sandbox"];
  auto r = run_command({"sftp", "-F", up.info["ssh_config"].get<std::string>(), "-J",
                        jump["user"].get<std::string>() + "@" + jump["host"].get<std::string>() + ":" +
                            std::to_string(jump["port"].get<int>()),
                        "-P", std::to_string(sb["port"].get<int>()), "-b", batch,
                        sb["user"].get<std::string>() + "@" + sb["host"].get<std::string>()},
                       {.deadline = 60s, .merge_stderr = true});
  REQUIRE(r);
  return *r;
}

}  // namespace

TEST_CASE("check verifies a sandbox from local up given only its ssh -J line", "[system][hawk]") {
  const json item = plan_item(scenario_file("strict.yaml"));
  LocalUp up(item["values"]);
  const std::string ssh = up.info["ssh_command"];
  CHECK_THAT(ssh, Catch::StartsWith("ssh ") && Catch::Contains(" -J "));
  RunResult sftp = sftp_pwd(up);  // the sandbox serves SFTP: the client's batch runs
  INFO(sftp.out);
  CHECK(sftp.exit_code == 0);
  CHECK_THAT(sftp.out, Catch::Contains("/home/agent"));
  RunResult r = check(scenario_file("strict.yaml"), item, ssh, up.dir.path + "/out");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  json result = result_in(up.dir.path + "/out");
  REQUIRE(result["sandboxes"].size() == 1);
  CHECK(result["sandboxes"][0]["facts"]["backend"] == "existing");
  CHECK(result["accepted_host_keys"].empty());  // both keys pinned by local up's known_hosts
  CHECK(failed_controls(result).empty());
}

// The test seam sshd:no-sftp given to local up: a real sshd without the SFTP subsystem
// (OpenSSH's own sftp client cannot start it), and check still verifies the sandbox, the
// agent sent over an exec channel.
TEST_CASE("check verifies a sandbox from local up whose sshd has no SFTP subsystem", "[system][hawk]") {
  const json item = plan_item(scenario_file("strict.yaml"));
  LocalUp up(item["values"], {"--test-weakening", "sshd:no-sftp"});
  CHECK(up.info["facts"]["test_weakenings"][0] == "sshd:no-sftp");
  RunResult refused = sftp_pwd(up);
  INFO(refused.out);
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.out, Catch::Contains("subsystem request failed"));
  RunResult r = check(scenario_file("strict.yaml"), item, up.info["ssh_command"], up.dir.path + "/out");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  json result = result_in(up.dir.path + "/out");
  REQUIRE(result["sandboxes"].size() == 1);
  const json& s = result["sandboxes"][0];
  CHECK(s["facts"]["isoprobe_upload_via"] == "exec");
  int agent_upload_passed = 0;
  for (const auto& c : s["checks"])
    if (c["control"] == "agent_upload" && c["status"] == "pass") ++agent_upload_passed;
  CHECK(agent_upload_passed == 1);
  CHECK(failed_controls(result).empty());
}

// A platform whose sandboxes' sshd serves no SFTP (the stand-in gives every local up the seam
// sshd:no-sftp): `run` through the hawk backend still passes, the posture agent sent packed
// (the unpacker and the xz stream in one exec channel) as it is to every sandbox.
TEST_CASE("run on a platform whose sandboxes have no SFTP passes, the agent sent packed", "[system][hawk]") {
  Platform p;
  p.env_extra["HAWK_STANDIN_TEST_WEAKENINGS"] = "sshd:no-sftp";
  p.agent = test::binary_dir() + "/probes/isoprobe-posture";
  // This case is about the upload path. Its sandbox's first SSH through the jumphost is the
  // harness's own, inside the probe's window, so the stand-in's Hubble has no earlier flow
  // of it and its drop view cannot be judged on: run without witnesses.
  p.witness = false;
  p.hubble = false;
  p.write_profile();
  RunResult r = p.run({cheap_scenario(p.dir.path, 1)});
  INFO(r.out);
  CHECK(r.exit_code == 0);
  std::ifstream events(p.state + "/events.jsonl");
  int seamed_starts = 0;
  for (std::string line; std::getline(events, line);) {
    const json e = json::parse(line);
    if (e["event"] == "start" && e["test_weakenings"] == json::array({"sshd:no-sftp"})) ++seamed_starts;
  }
  CHECK(seamed_starts == 1);
  const json result = result_in(p.out);
  REQUIRE(result["sandboxes"].size() == 1);
  const json& s = result["sandboxes"][0];
  for (const auto& c : s["checks"])  // every check judged; if not, why (once)
    if (c["status"] == "unwitnessed") {
      FAIL_CHECK(c["evidence"].get<std::string>().substr(0, 3000));
      break;
    }
  CHECK(s["error"].is_null());
  CHECK(s["facts"]["isoprobe_upload_via"] == "exec");
  CHECK(s["facts"]["isoprobe_upload_bytes"] == std::filesystem::file_size(p.agent + "/isoprobe"));
  int agent_upload_passed = 0;
  for (const auto& c : s["checks"])
    if (c["control"] == "agent_upload" && c["status"] == "pass") ++agent_upload_passed;
  CHECK(agent_upload_passed == 1);
  CHECK(failed_controls(result).empty());
  p.require_nothing_left();
}

TEST_CASE("local up deploys every service, and check judges the siblings of what it made", "[system][hawk]") {
  const json item = plan_item(scenario_file("siblings.yaml"));
  REQUIRE(item["values"]["services"].size() == 3);
  LocalUp up(item["values"]);
  std::set<std::string> deployed;
  for (const auto& s : up.info["facts"]["siblings"]) deployed.insert(s["service"].get<std::string>());
  CHECK(deployed == std::set<std::string>{"helper", "scorer"});
  RunResult r = check(scenario_file("siblings.yaml"), item, up.info["ssh_command"], up.dir.path + "/out");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  json result = result_in(up.dir.path + "/out");
  std::map<std::string, std::string> sibling_checks;
  for (const auto& c : result["sandboxes"][0]["checks"])
    if (c["control"].get<std::string>().rfind("sibling:", 0) == 0)
      sibling_checks[c["control"].get<std::string>()] = c["status"].get<std::string>();
  CHECK(sibling_checks["sibling:helper"] == "pass");  // reached by name
  CHECK(sibling_checks["sibling:scorer"] == "pass");  // walled off
  CHECK(sibling_checks["sibling:scorer:inside"] == "n/a");
  CHECK(failed_controls(result).empty());
}

TEST_CASE("check fails a sandbox weakened behind the plan's back", "[system][hawk]") {
  const json item = plan_item(scenario_file("strict.yaml"));
  json weakened = item["values"];
  weakened["services"]["default"]["runtimeClassName"] = "CLUSTER_DEFAULT";
  weakened["services"]["default"].erase("securityContext");
  LocalUp up(weakened);
  RunResult r = check(scenario_file("strict.yaml"), item, up.info["ssh_command"], up.dir.path + "/out");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  auto failed = failed_controls(result_in(up.dir.path + "/out"));
  CHECK(std::find(failed.begin(), failed.end(), "kernel") != failed.end());
  CHECK(failed.size() >= 3);
}

namespace {

std::vector<std::string> refusal_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(scenario_file("refused")))
    out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Strict scenarios that a deployment without a hardened runtime class must refuse.
std::vector<std::string> strict_scenarios() {
  return {scenario_file("mixed.yaml"), scenario_file("strict-egress.yaml"), scenario_file("strict.yaml")};
}

// report.md's "Refused as required" table: scenario -> its cells (rule and reason
// expected, what the platform answered, verdict).
std::map<std::string, std::vector<std::string>> refused_rows(const std::string& out) {
  const std::string md = test::read_text(out + "/report.md");
  const auto at = md.find("\n### Refused as required (");
  REQUIRE(at != std::string::npos);
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream in(md.substr(at + 1));
  std::string line;
  std::getline(in, line);  // the heading
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') {
      if (in_table) break;
      continue;
    }
    in_table = true;
    if (line.rfind("|---", 0) == 0) continue;
    std::vector<std::string> cells;
    std::size_t from = 2;
    for (auto bar = line.find(" | ", from); bar != std::string::npos; bar = line.find(" | ", from)) {
      cells.push_back(line.substr(from, bar - from));
      from = bar + 3;
    }
    cells.push_back(line.substr(from, line.size() - from - 2));
    if (cells.size() == 4 && cells[0] != "scenario") rows[cells[0]] = {cells[1], cells[2], cells[3]};
  }
  return rows;
}

std::size_t junit_refusal_cases(const std::string& out) {
  const std::string xml = test::read_text(out + "/junit.xml");
  std::size_t n = 0;
  for (auto at = xml.find("<testcase classname=\"refused."); at != std::string::npos;
       at = xml.find("<testcase classname=\"refused.", at + 1))
    ++n;
  return n;
}

// `isoharness run` on the local backend (the planner stands in for the platform).
RunResult run_local(const std::string& out, const std::string& deployment,
                    const std::vector<std::string>& files, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {isoharness_bin(),    "run",    "--out",        out,
                                   "--isoprobe-bundle", bundle(), "--deployment", deployment};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), files.begin(), files.end());
  auto r = run_command(argv, {.deadline = 600s, .merge_stderr = true});
  REQUIRE(r);
  return *r;
}

// Both runs judged each refusal scenario the same: same rule and reason, same verdict mark.
void require_same_rows(const std::string& hawk_out, const std::string& local_out, std::size_t expected) {
  const auto hawk_rows = refused_rows(hawk_out);
  const auto local_rows = refused_rows(local_out);
  CHECK(hawk_rows.size() == expected);
  REQUIRE(local_rows.size() == hawk_rows.size());
  for (const auto& [name, cells] : hawk_rows) {
    INFO(name);
    REQUIRE(local_rows.count(name));
    CHECK(local_rows.at(name)[0] == cells[0]);
    // The same mark; the words may differ by what each platform did: the planner knows the
    // image user and refuses non_root on a root image, the stand-in accepts it and never runs it.
    auto mark = [](const std::string& verdict) { return verdict.substr(0, verdict.find(' ')); };
    CHECK(mark(local_rows.at(name)[2]) == mark(cells[2]));
  }
  CHECK(junit_refusal_cases(hawk_out) == expected);
  CHECK(junit_refusal_cases(local_out) == expected);
}

// Every record of the run is a refusal scenario's, its one check fail_loudly at `status`.
json require_refusal_verdicts(const std::string& out, std::size_t expected, const std::string& status) {
  json result = result_in(out);
  REQUIRE(result["sandboxes"].size() == expected);
  for (const auto& s : result["sandboxes"]) {
    INFO(s.dump());
    CHECK(s["refusal"].is_object());
    REQUIRE(s["checks"].size() == 1);
    CHECK(s["checks"][0]["control"] == "fail_loudly");
    CHECK(s["checks"][0]["status"] == status);
  }
  return result;
}

// A platform that accepted all `expected` configs: the run exits 1 naming each, the report
// says so, and every eval the stand-in started was deleted at once.
void require_all_accepted(const Platform& p, const RunResult& r, const std::string& out,
                          std::size_t expected) {
  CHECK(r.exit_code == 1);
  for (const auto& s : require_refusal_verdicts(out, expected, "fail")["sandboxes"])
    CHECK_THAT(r.out, Catch::Contains("the platform accepted '" + s["scenario"].get<std::string>() + "'"));
  for (const auto& [name, cells] : refused_rows(out)) {
    INFO(name);
    CHECK(cells[2] == "❌ accepted");
  }
  CHECK(p.evals().size() == expected);
  p.require_nothing_left();
}

}  // namespace

TEST_CASE("configs the platform must refuse: refused as required, on hawk and on local", "[system][hawk]") {
  Platform p;
  p.env_extra["HAWK_STANDIN_ROOT_TASKS"] = "firmware_triage";
  RunResult r = p.run(refusal_scenarios());
  const std::string& out = p.out;
  INFO(r.out);
  CHECK(r.exit_code == 0);
  require_refusal_verdicts(out, refusal_scenarios().size(), "pass");
  // Only the root-image config is accepted (kubelet refuses its container); it is deleted.
  CHECK(p.evals().size() == 1);
  p.require_nothing_left();
  for (const auto& [name, cells] : refused_rows(out)) {
    INFO(name);
    CHECK_THAT(cells[2], Catch::StartsWith("✅ "));
  }

  RunResult local =
      run_local(p.dir.path + "/local", scenario_file("deployments/local.yaml"), refusal_scenarios());
  INFO(local.out);
  CHECK(local.exit_code == 0);
  require_refusal_verdicts(p.dir.path + "/local", refusal_scenarios().size(), "pass");
  require_same_rows(out, p.dir.path + "/local", refusal_scenarios().size());
}

TEST_CASE("a platform that accepts everything fails fail_loudly, naming each config", "[system][hawk]") {
  Platform p;
  p.mode = "accept-everything";
  RunResult r = p.run(refusal_scenarios());
  const std::string& out = p.out;
  INFO(r.out);
  require_all_accepted(p, r, out, refusal_scenarios().size());
}

TEST_CASE("strict without a hardened runtime class is refused at submission, on hawk and on local",
          "[system][hawk]") {
  Platform p(300, false);
  const std::string out = p.dir.path + "/out";
  RunResult r = p.run(out, strict_scenarios());
  INFO(r.out);
  CHECK(r.exit_code == 0);
  for (const auto& s : require_refusal_verdicts(out, strict_scenarios().size(), "pass")["sandboxes"]) {
    INFO(s.dump());
    CHECK(s["refusal"]["reason"] == "hardened runtime class");
    CHECK_THAT(s["facts"]["refusal_message"].get<std::string>(),
               Catch::Contains("Error: ") && Catch::Contains("hardened runtime class"));
  }
  CHECK(p.evals().empty());  // refused at submission: the stand-in never started one
  p.require_nothing_left();

  const std::string local_out = p.dir.path + "/local";
  RunResult local =
      run_local(local_out, scenario_file("deployments/local-no-hardened-class.yaml"), strict_scenarios());
  INFO(local.out);
  CHECK(local.exit_code == 0);
  require_refusal_verdicts(local_out, strict_scenarios().size(), "pass");
  require_same_rows(out, local_out, strict_scenarios().size());
}

TEST_CASE("a platform that runs strict without a hardened class fails fail_loudly, nothing left",
          "[system][hawk]") {
  Platform p(300, false);
  p.mode = "accept-everything";
  const std::string out = p.dir.path + "/out";
  RunResult r = p.run(out, strict_scenarios());
  INFO(r.out);
  require_all_accepted(p, r, out, strict_scenarios().size());
}

namespace {

// control -> {status, evidence} of every egress check of every sandbox, keyed "runtime control".
std::map<std::string, std::pair<std::string, std::string>> egress_checks(const json& result) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const auto& s : result["sandboxes"])
    for (const auto& c : s["checks"])
      if (c["control"].get<std::string>().rfind("egress:", 0) == 0)
        out[s["runtime"].get<std::string>() + " " + c["control"].get<std::string>()] = {
            c["status"].get<std::string>(), c["evidence"].get<std::string>()};
  return out;
}

// The verdict rule's row a witnessed egress check was judged by ("B6", "A1", ...), "" when
// the evidence does not begin "judged by the witnesses (rule <row>: ...".
std::string rule_of(const std::string& evidence) {
  const std::string head = "judged by the witnesses (rule ";
  if (evidence.rfind(head, 0) != 0) return "";
  const auto colon = evidence.find(':', head.size());
  return colon == std::string::npos ? "" : evidence.substr(head.size(), colon - head.size());
}

}  // namespace

TEST_CASE(
    "an operator-run witness and the stand-in's Hubble judge the hawk run's egress; blocked ways out "
    "pass on the drop point's record",
    "[system][hawk]") {
  Platform p;
  p.egress = true;
  p.write_profile();  // witness: and hubble: (the Platform's default)
  RunResult r = p.run({scenario_file("standard.yaml")});
  INFO(r.out);
  CHECK(r.exit_code == 0);
  const json result = result_in(p.out);
  const auto checks = egress_checks(result);
  int stopped = 0, dropped = 0;
  for (const auto& [key, check] : checks) {
    INFO(key << ": " << check.second);
    // n/a: an ICMP socket that never opened (gVisor), nothing sent and nothing arrived.
    if (check.first == "n/a" && key.find("icmp") != std::string::npos) continue;
    CHECK(check.first == "pass");
    const std::string row = rule_of(check.second);
    CHECK((row == "B6" || row == "A1"));
    if (row != "B6") continue;
    // Rule B6: the stand-in's Hubble showed the kernel's drop, the arrival witness nothing;
    // for data leaving through DNS the sandbox's resolver took the query and passed nothing on.
    CHECK_THAT(check.second, Catch::Contains("drop point: hubble ("));
    if (key.find("dns-exfil") == std::string::npos) {
      CHECK_THAT(check.second, Catch::Contains("dropped ") && Catch::Contains("(POLICY_DENIED)"));
      ++dropped;
    }
    ++stopped;
  }
  for (const std::string runtime : {"runc", "gvisor"})
    for (const char* target :
         {"canary-tcp", "canary-udp", "canary-udp-443", "canary-icmp", "dns-exfil", "metadata"}) {
      const std::string key = runtime + " egress:" + target;
      INFO(key);
      REQUIRE(checks.count(key) == 1);
      if (checks.at(key).first != "n/a") CHECK(rule_of(checks.at(key).second) == "B6");
    }
  CHECK(stopped >= 10);
  CHECK(dropped >= 8);
  for (const auto& s : result["sandboxes"]) {
    CHECK(s["witness"]["witness"].get<std::string>().find("jumphost") ==
          std::string::npos);  // the URL names the address it used
    for (const auto& c : s["checks"])
      if (rule_of(c["evidence"].get<std::string>()) == "B6")
        CHECK_THAT(c["observed"].get<std::string>(), Catch::Contains("stopped"));
  }
  const std::string md = test::read_text(p.out + "/report.md");
  CHECK_THAT(md, Catch::Contains("### Egress: who judged ("));
  p.require_nothing_left();

  {  // A platform whose sandboxes let UDP out: the canary's datagrams arrive (and the sandbox
    // says so: rule B1), and metadata's UDP goes out where no witness watches and no drop
    // point stops it: unwitnessed (B5), so the run ends 3.
    p.env_extra["HAWK_STANDIN_TEST_WEAKENINGS"] = "nft:allow-udp";
    RunResult weak = p.run(p.dir.path + "/weak", {scenario_file("standard.yaml")});
    INFO(weak.out);
    CHECK(weak.exit_code == 3);
    const auto weak_checks = egress_checks(result_in(p.dir.path + "/weak"));
    for (const std::string runtime : {"runc", "gvisor"}) {
      const auto& udp = weak_checks.at(runtime + " egress:canary-udp");
      INFO(runtime << ": " << udp.second);
      CHECK(udp.first == "fail");
      CHECK(rule_of(udp.second) == "B1");
      // The arrival witness's record of it, beside the sandbox's word.
      CHECK_THAT(udp.second, Catch::Contains("record(s)\n    udp ") && Catch::Contains("203.0.113.40:53"));
      const auto& metadata_udp = weak_checks.at(runtime + " egress:metadata-udp");
      CHECK(metadata_udp.first == "unwitnessed");
      CHECK(rule_of(metadata_udp.second) == "B5");
      CHECK(weak_checks.at(runtime + " egress:canary-tcp").first == "pass");  // TCP stays shut
      CHECK(rule_of(weak_checks.at(runtime + " egress:canary-tcp").second) == "B6");
    }
    p.require_nothing_left();
    p.env_extra.erase("HAWK_STANDIN_TEST_WEAKENINGS");
  }
  {  // The platform's Hubble cannot be reached: no blocked way out passes, the run exits 3.
    p.env_extra["HAWK_STANDIN_HUBBLE"] = "down";
    RunResult down = p.run(p.dir.path + "/down", {scenario_file("standard.yaml")});
    INFO(down.out);
    CHECK(down.exit_code == 3);
    CHECK_THAT(down.out, Catch::Contains("unwitnessed: "));
    int unwitnessed = 0;
    for (const auto& [key, check] : egress_checks(result_in(p.dir.path + "/down"))) {
      INFO(key << ": " << check.second);
      CHECK(rule_of(check.second) != "B6");
      if (rule_of(check.second) != "B4") continue;
      CHECK(check.first == "unwitnessed");
      CHECK_THAT(check.second, Catch::Contains("the Hubble flows could not be read") &&
                                   Catch::Contains("connection refused"));
      ++unwitnessed;
    }
    CHECK(unwitnessed >= 10);
    p.require_nothing_left();
    p.env_extra.erase("HAWK_STANDIN_HUBBLE");
  }
  {  // The same platform declaring no witness: sandbox-reported, and report.md says so.
    p.witness = false;
    p.hubble = false;
    p.write_profile();
    RunResult plain = p.run(p.dir.path + "/plain", {scenario_file("standard.yaml")});
    INFO(plain.out);
    CHECK(plain.exit_code == 0);
    for (const auto& [key, check] : egress_checks(result_in(p.dir.path + "/plain"))) {
      INFO(key);
      CHECK_THAT(
          check.second,
          Catch::StartsWith("judged by the sandbox's own report (the deployment declares witness: none)"));
    }
    CHECK_THAT(test::read_text(p.dir.path + "/plain/report.md"),
               Catch::Contains("### Egress: who judged (0 witnessed · ") &&
                   Catch::Contains("the deployment declares witness: none: "));
    p.require_nothing_left();
  }
}

namespace {

// The first line of a program's --version on this machine, the harness host.
std::string host_version(const std::string& program) {
  auto r = run_command({program, "--version"}, {.deadline = 10s});
  REQUIRE(r);
  REQUIRE(r->ok());
  return r->out.substr(0, r->out.find('\n'));
}

// The context with harness_host left out: what the history, drift and the reports read as
// the deployment's.
json deployment_part(json context) {
  context.erase("harness_host");
  return context;
}

}  // namespace

TEST_CASE("hawk: UDP at an allowed domain is tried, and stopped on the drop point's record",
          "[system][hawk]") {
  Platform p;
  p.egress = true;
  p.write_profile();  // witness: and hubble:
  RunResult r = p.run({scenario_file("strict-egress.yaml")});
  INFO(r.out);
  // The reachable ways to the listed domain have no arrival witness on a deployment (A2), so
  // the run's exit is not this test's point: the UDP way out, which allowDomains never opens, is.
  const auto checks = egress_checks(result_in(p.out));
  for (const std::string runtime : {"gvisor"}) {  // strict: gVisor only
    const std::string key = runtime + " egress:allowed-target.example.com-udp";
    INFO(key);
    REQUIRE(checks.count(key) == 1);
    INFO(checks.at(key).second);
    CHECK(checks.at(key).first == "pass");
    CHECK(rule_of(checks.at(key).second) == "B6");
    CHECK_THAT(checks.at(key).second, Catch::Contains("drop point: hubble (") && Catch::Contains("udp") &&
                                          Catch::Contains("203.0.113.10:53"));
  }
  p.require_nothing_left();
}

TEST_CASE("a hawk run's context and its history row are the deployment's, never the harness host's",
          "[system][hawk][context]") {
  Platform p;
  // The deployment declares its nodes' image and runc; it declares no runsc.
  std::ofstream(p.profile, std::ios::app) << "node_image:\n  name: standin-image-7\n  runc_version: 1.3.3\n";
  const RunResult r = p.run({scenario_file("gvisor-only.yaml")});
  INFO(r.out);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  const json result = result_in(p.out);
  const json& context = result["context"];
  INFO(context.dump(2));
  const std::string runc = host_version("runc"), runsc = host_version("runsc");
  CHECK(context["backend"] == "hawk");
  CHECK(context["runc"] == "1.3.3");
  CHECK(context["node_image"] == "standin-image-7");
  CHECK(context["runsc"].is_null());
  CHECK(context["kernel"].is_null());
  // The harness host's versions are kept, under the name of what they are.
  CHECK(context["harness_host"]["runc"] == runc);
  CHECK(context["harness_host"]["runsc"] == runsc);
  CHECK(context["harness_host"]["kernel"].get<std::string>().starts_with("Linux "));
  const std::string shown = deployment_part(context).dump();
  CHECK(shown.find(runc) == std::string::npos);
  CHECK(shown.find(runsc) == std::string::npos);
  CHECK(shown.find(context["harness_host"]["kernel"].get<std::string>()) == std::string::npos);

  // The history row keeps the same context: nothing of the host's is read as the deployment's.
  const std::string db = p.dir.path + "/history.sqlite";
  auto rec = run_command({isoharness_bin(), "history", "--db", db, "record", p.out + "/result.json"},
                         {.deadline = 60s, .merge_stderr = true});
  REQUIRE(rec);
  INFO(rec->out);
  REQUIRE(rec->ok());
  auto show = run_command({isoharness_bin(), "history", "--db", db, "show",
                           result["run"]["id"].get<std::string>(), "--format", "json"},
                          {.deadline = 60s});
  REQUIRE(show);
  REQUIRE(show->ok());
  const json row = json::parse(show->out)["context"];
  CHECK(row["runc"] == "1.3.3");
  CHECK(row["runsc"].is_null());
  CHECK(row["kernel"].is_null());
  CHECK(row["harness_host"]["runsc"] == runsc);
  const std::string stored = deployment_part(row).dump();
  CHECK(stored.find(runc) == std::string::npos);
  CHECK(stored.find(runsc) == std::string::npos);
  p.require_nothing_left();
}
