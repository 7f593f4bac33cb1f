// The hawk backend at its seam: the one-item config, what the CLI prints, the deploy and
// delete sequence against a scripted CLI, and the deployment profile's hawk sections.
#include "harness/deploy/hawk/hawk_backend.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "harness/common/error.h"
#include "harness/deploy/deploy_failed.h"
#include "harness/deploy/egress_target.h"
#include "harness/deploy/factory/backend_factory.h"
#include "harness/deploy/hawk/hawk_cli.h"
#include "harness/deploy/hawk/keyring_probe.h"
#include "harness/deploy/hawk/one_item_config.h"
#include "harness/deploy/hawk/platform_text.h"
#include "harness/deploy/hawk/start_retry.h"
#include "harness/scenario/scenario.h"

using namespace isoharness;
using namespace isoharness::deploy::hawk;
using nlohmann::json;

namespace {

const json kEvalSet = json::parse(R"({
  "name": "mixed", "isolation": "standard", "limit": 20, "epochs": 3, "models": ["m"],
  "tasks": [
    {"package": "git+https://git.example.com/a@v1", "name": "a", "items": [
      {"name": "one", "args": {"x": 1}},
      {"name": "two", "isolation": "strict", "sample_ids": ["s"]}]},
    {"package": "git+https://git.example.com/b@v1", "name": "b", "items": [
      {"name": "three", "isolation": {"level": "strict", "allow_domains": ["target.example.com"]}}]}]
})");

constexpr const char* kProfile = R"(backend: hawk
runtime_classes: [gvisor]
sandbox_runtime_class: gvisor
hawk:
  cli: /opt/hawk
  human: alice
  identity_file: ~/.ssh/id_ed25519
  jumphost_host_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIATa7TySBAxRWg7jZr8RowgcPkvoBS1hRj1AjCT4GERa"
  sandbox_host_keys: first-use
  start_timeout_s: 3
egress:
  allowed_domain_port: 443
  internet_canary: "canary.example.com:443"
  metadata: "169.254.169.254:80"
  cluster_api: "kubernetes.default.svc:443"
node_classes:
  tier: { env: { HAWK_API_URL: "https://hawk.example.com" }, config_overrides: { runner: { memory: 2Gi } } }
)";

}  // namespace

TEST_CASE("one-item config: one task, one item, isolation untouched, limit and epochs 1", "[hawk]") {
  json c = one_item_config(kEvalSet, {0, 1, ""}, json::object());
  REQUIRE(c["tasks"].size() == 1);
  REQUIRE(c["tasks"][0]["items"].size() == 1);
  CHECK(c["tasks"][0]["items"][0]["name"] == "two");
  CHECK(c["tasks"][0]["items"][0]["isolation"] == "strict");
  CHECK(c["isolation"] == "standard");
  CHECK(c["limit"] == 1);
  CHECK(c["epochs"] == 1);
  CHECK(c["models"] == json::array({"m"}));
  CHECK(c["tasks"][0]["package"] == "git+https://git.example.com/a@v1");

  SECTION("a matrix runtime is asked for in the item's isolation, in each of its shapes") {
    CHECK(one_item_config(kEvalSet, {0, 0, "gvisor"}, {})["tasks"][0]["items"][0]["isolation"] ==
          json{{"runtime_class", "gvisor"}});
    CHECK(one_item_config(kEvalSet, {0, 1, "gvisor"}, {})["tasks"][0]["items"][0]["isolation"] ==
          json{{"level", "strict"}, {"runtime_class", "gvisor"}});
    json three = one_item_config(kEvalSet, {1, 0, "gvisor"}, {})["tasks"][0]["items"][0]["isolation"];
    CHECK(three["runtime_class"] == "gvisor");
    CHECK(three["allow_domains"] == json::array({"target.example.com"}));
    CHECK(three["level"] == "strict");
  }
  SECTION("node-class overrides merge, never into what is submitted") {
    json o = one_item_config(kEvalSet, {0, 0, ""}, json{{"runner", {{"memory", "2Gi"}}}, {"name", "x"}});
    CHECK(o["runner"]["memory"] == "2Gi");
    CHECK(o["name"] == "x");
    CHECK_THROWS_AS(one_item_config(kEvalSet, {0, 0, ""}, json{{"limit", 5}}), UserError);
    CHECK_THROWS_AS(one_item_config(kEvalSet, {0, 0, ""}, json{{"isolation", "standard"}}), UserError);
  }
  SECTION("indices that name no item") {
    CHECK_THROWS_AS(one_item_config(kEvalSet, {2, 0, ""}, {}), UserError);
    CHECK_THROWS_AS(one_item_config(kEvalSet, {0, 2, ""}, {}), UserError);
  }
}

TEST_CASE("what the hawk CLI prints: the eval set id and its errors", "[hawk]") {
  CHECK(parse_eval_set_id("Submitting...\nEval set ID: human-eval-7f3a\nView at https://x.example.com\n")
            .value() == "human-eval-7f3a");
  CHECK_FALSE(parse_eval_set_id("Eval set ID: ../../etc").has_value());
  CHECK_FALSE(parse_eval_set_id("Eval set ID:").has_value());
  CHECK_FALSE(parse_eval_set_id("nothing").has_value());
  CHECK(cli_error_message("Traceback...\nError: strict needs a hardened runtime class\n") ==
        "Error: strict needs a hardened runtime class");
  CHECK(cli_error_message("\n boom\x1b[0m \n") == "boom [0m");
  CHECK(cli_error_message("") == "(no message on stderr)");
}

TEST_CASE("platform text: the tail of hawk logs, and the CLI's login prompts", "[hawk]") {
  CHECK(platform_tail("a\nb\nc\n", 2, 100) == "b\nc");
  CHECK(platform_tail("a\nb\nc", 5, 100) == "a\nb\nc");
  CHECK(platform_tail("only one line", 1, 100) == "only one line");
  CHECK(platform_tail("a\n" + std::string(50, 'x') + "END", 3, 10) == "xxxxxxxEND");  // bytes bound the lines
  CHECK(platform_tail("bell\x07 esc\x1b[1m del\x7f utf8 \xc3\xa9 cr\r\n", 5, 100) ==
        "bell? esc?[1m del? utf8 ?? cr");
  CHECK(platform_tail("", 5, 100).empty());
  CHECK(platform_tail("a\nb", 0, 100).empty());

  CHECK(login_prompt("Error: not found\n", 17).empty());
  CHECK(login_prompt("Access token missing or expiring soon, refreshing\n", 50).empty());
  const std::string real = "No valid access token found. Logging in...\n";
  CHECK_THAT(login_prompt(real, real.size()), Catch::Contains("No valid access token found"));
  CHECK_FALSE(login_prompt("User code: WDJB-MJHT\n", 21).empty());
  CHECK_FALSE(login_prompt("Visit the following URL to finish logging in:\n", 46).empty());
  CHECK_FALSE(login_prompt("https://login.example.com/activate?user_code=WDJB-MJHT\n", 10).empty());
  // A prompt split across reads is seen when its second half arrives.
  const std::string split = "warming up\nNo valid access token found.";
  CHECK_FALSE(login_prompt(split, 8).empty());
}

namespace {

// A scripted hawk CLI: answers by subcommand and records every call.
struct FakeHawk {
  std::vector<std::vector<std::string>> calls;
  int ssh_failures_before_ready = 1;  // < 0: never ready
  std::string start_err;
  int start_exit = 0;
  // Answers of the first starts, in order (exit status, stderr); later starts answer as above.
  std::vector<std::pair<int, std::string>> start_script;
  std::string logs_out;
  std::string status_out;  // what `hawk status` prints; empty: a pod Pending with FailedScheduling
  // The subcommand ("start", "ssh-command", "status", ...) that finds no valid token and
  // starts the device login, printing what the real CLI prints, in two pieces, through the
  // caller's watch as run_command would.
  std::string needs_login_in;
  // How `auth access-token` (the login pre-flight) answers: "token", "logged-out" (exit 1),
  // "no-command" (click's usage error), "prompt-stdout" (the device login, on stdout). Its
  // calls are counted here, not kept in `calls`.
  std::string token = "token";
  int token_asks = 0;

  static std::string subcommand(const std::vector<std::string>& argv) {
    return argv.at(1) == "human" ? argv.at(3) : argv.at(1);
  }
  static bool login_stops(const RunOptions& o, RunResult& r) {
    REQUIRE(o.watch);
    for (std::string piece : {"No valid access", " token found. Logging in...\nUser code: ABCD-EFGH\n"}) {
      r.err += piece;
      r.stopped = o.watch(OutputSeen{true, r.err, piece.size()});
      if (!r.stopped.empty()) return true;
    }
    return false;
  }

  HawkCli::Runner runner() {
    return [this](const std::vector<std::string>& argv, const RunOptions& o) -> Expected<RunResult> {
      CHECK(o.env_set.count("HAWK_API_URL") == 1);
      RunResult r;
      r.exited = true;
      r.exit_code = 0;
      if (argv.at(1) == "auth") return answer_token(o, r);
      calls.push_back(argv);
      if (subcommand(argv) == needs_login_in) {
        REQUIRE(login_stops(o, r));
        r.exited = false;
        r.term_signal = 9;
        return r;
      }
      const std::string& sub = argv.at(1);
      if (sub == "human" && argv.at(3) == "start" && !start_script.empty()) {
        r.exit_code = start_script.front().first;
        r.err = start_script.front().second;
        start_script.erase(start_script.begin());
      } else if (sub == "human" && argv.at(3) == "start") {
        r.exit_code = start_exit;
        r.out = start_exit ? "" : "Eval set ID: ev-1\n";
        r.err = start_err;
      } else if (sub == "human" && argv.at(3) == "ssh-command") {
        if (ssh_failures_before_ready < 0 || ssh_failures_before_ready-- > 0) {
          r.exit_code = 1;
          r.err = "Error: timed out waiting for the sandbox\n";
        } else {
          r.out = "ssh -J jump@198.51.100.130:22 -p 2222 agent@192.0.2.193\n";
        }
      } else if (sub == "logs") {
        r.out = logs_out;
      } else if (sub == "status" && !status_out.empty()) {
        r.out = status_out;
      } else if (sub == "status") {
        r.out = R"({"pod_status": {"pods": [{"name": "sb", "namespace": "ev-1", "phase": "Pending",
          "component": "sandbox", "events": [{"type": "Warning", "reason": "FailedScheduling",
          "message": "0/3 nodes are available", "count": 4}]}]}})";
      }
      return r;
    };
  }
  RunResult answer_token(const RunOptions& o, RunResult& r) {
    ++token_asks;
    if (token == "token") r.out = "eyJhbGciOiJSUzI1NiJ9.secret\n";
    if (token == "logged-out") r.exit_code = 1, r.err = "Error: No valid access token found\n";
    if (token == "no-command")
      r.exit_code = 2, r.err = "Usage: hawk [OPTIONS]\nError: No such command 'auth'.\n";
    if (token == "prompt-stdout") {
      r.out = "No valid access token found. Logging in...\n";
      r.stopped = o.watch(OutputSeen{false, r.out, r.out.size()});
      r.exited = r.stopped.empty();
    }
    return r;
  }
  int count(const std::string& word) const {
    int n = 0;
    for (const auto& c : calls)
      for (const auto& w : c) n += w == word;
    return n;
  }
};

deploy::SandboxRequest request() {
  deploy::SandboxRequest r;
  r.run_id = "abc123";
  r.name = "s1";
  r.node_class = "tier";
  r.eval_set = kEvalSet;
  r.task_index = 0;
  r.item_index = 0;
  r.add_runtime_class = "gvisor";
  return r;
}

// Pauses between tries of a start, recorded instead of slept.
std::vector<std::chrono::milliseconds> g_pauses;

HawkOptions options(FakeHawk& fake, const std::string& dir) {
  HawkOptions o;
  o.run_id = "abc123";
  o.work_dir = dir;
  o.runner = fake.runner();
  o.poll_step = std::chrono::seconds(1);
  g_pauses.clear();
  o.pause = [](std::chrono::milliseconds p) { g_pauses.push_back(p); };
  return o;
}

}  // namespace

TEST_CASE("hawk backend: start, wait, route, delete", "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit";
  std::filesystem::remove_all(dir);
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  FakeHawk fake;
  fake.start_err = "Warning: Unknown configuration keys found: isolation\n";
  {
    HawkBackend backend(profile, options(fake, dir));
    auto h = backend.deploy(request());
    CHECK(h.name == "ev-1");
    CHECK(h.route.jump.host == "198.51.100.130");
    CHECK(h.route.jump.host_key == profile.hawk->jumphost_host_key);
    CHECK(h.route.sandbox.port == 2222);
    CHECK(h.route.sandbox.host_key.empty());  // first use, through the pinned jumphost
    CHECK(h.facts.extra["runtime_requested"] == "gvisor");
    REQUIRE(h.facts.extra["platform_findings"].size() == 1);
    CHECK(h.facts.extra["platform_findings"][0]["code"] == "platform_unknown_config_keys");
    REQUIRE(fake.calls.size() >= 4);
    CHECK(fake.calls[0] == std::vector<std::string>{"/opt/hawk", "human", "eval", "start", fake.calls[0][4],
                                                    "--human", "alice", "--skip-confirm"});
    json submitted = json::parse(scenario::read_input_file(fake.calls[0][4]));
    CHECK(submitted["tasks"][0]["items"][0]["isolation"]["runtime_class"] == "gvisor");
    CHECK(submitted["runner"]["memory"] == "2Gi");
    CHECK(fake.count("status") == 2);  // polled while waiting, then asked which services run
    CHECK(fake.count("delete") == 0);
    backend.destroy(h);
    CHECK(fake.count("delete") == 1);
  }
  CHECK(fake.count("delete") == 1);  // nothing left to delete when the backend goes
}

TEST_CASE("hawk backend: a node class's placement is submitted, recorded, and its node read from status",
          "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit-placement";
  std::filesystem::remove_all(dir);
  const std::string yaml =
      std::string(kProfile) +
      "  non-tier:\n    env: { HAWK_API_URL: \"https://hawk.example.com\" }\n"
      "    node_selector: { example.com/pool: general }\n"
      "    tolerations: [ { key: pool, operator: Equal, value: general, effect: NoSchedule } ]\n";
  auto profile = scenario::parse_deployment(yaml, "staging.yaml");
  FakeHawk fake;
  fake.status_out = R"({"pod_status": {"pods": [
      {"name": "runner", "component": "runner", "phase": "Running", "node_name": "runner-node"},
      {"name": "sb-helper", "component": "sandbox", "phase": "Running", "node_name": "node-b",
       "container_statuses": [{"name": "helper", "ready": true}]},
      {"name": "sb", "component": "sandbox", "phase": "Running", "node_name": "node-a",
       "container_statuses": [{"name": "default", "ready": true}]}]}})";
  HawkBackend backend(profile, options(fake, dir));
  auto req = request();
  req.node_class = "non-tier";
  auto h = backend.deploy(req);
  json submitted = json::parse(scenario::read_input_file(fake.calls[0][4]));
  const json placement = {
      {"nodeSelector", {{"example.com/pool", "general"}}},
      {"tolerations",
       json::array(
           {{{"key", "pool"}, {"operator", "Equal"}, {"value", "general"}, {"effect", "NoSchedule"}}})}};
  CHECK(submitted[scenario::kSandboxPlacementKey] == placement);
  CHECK(submitted["tasks"][0]["items"][0]["isolation"]["runtime_class"] == "gvisor");  // untouched otherwise
  CHECK(h.facts.extra["placement_requested"] == placement);
  CHECK(h.facts.node_name == "node-a");  // the agent's pod, not the runner's or a sibling's
  backend.destroy(h);

  SECTION("a class that names no placement submits none") {
    FakeHawk plain;
    HawkBackend b2(profile, options(plain, dir));
    auto h2 = b2.deploy(request());
    json c = json::parse(scenario::read_input_file(plain.calls[0][4]));
    CHECK_FALSE(c.contains(scenario::kSandboxPlacementKey));
    CHECK(h2.facts.extra["placement_requested"].is_null());
    CHECK(h2.facts.node_name.empty());  // the platform's status names no node
    b2.destroy(h2);
  }
}

TEST_CASE("hawk backend: a sandbox that never comes up fails with its pods' events, and is deleted",
          "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit2";
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  FakeHawk fake;
  fake.ssh_failures_before_ready = -1;
  HawkBackend backend(profile, options(fake, dir));
  try {
    backend.deploy(request());
    FAIL("deploy succeeded");
  } catch (const InfraError& e) {
    std::string m = e.what();
    CHECK_THAT(m, Catch::Contains("no sandbox answered within 3 s"));
    CHECK_THAT(m, Catch::Contains("pod ev-1/sb: Pending"));
    CHECK_THAT(m, Catch::Contains("FailedScheduling: 0/3 nodes are available (x4)"));
  }
  CHECK(fake.count("delete") == 1);
}

TEST_CASE("hawk backend: a failed start carries the end of hawk logs, bounded and neutralised", "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit5";
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  FakeHawk fake;
  fake.ssh_failures_before_ready = -1;
  for (int i = 0; i < 500; ++i) fake.logs_out += "[2026-12-02 01:00:00Z] line " + std::to_string(i) + "\n";
  fake.logs_out += "[2026-12-02 01:00:01Z] [ERROR] pull failed \x1b]0;owned\x07\x1b[2J \xff\n";
  HawkBackend backend(profile, options(fake, dir));
  std::string m;
  try {
    backend.deploy(request());
  } catch (const InfraError& e) {
    m = e.what();
  }
  CHECK_THAT(m, Catch::Contains("no sandbox answered within 3 s"));
  CHECK_THAT(m, Catch::Contains("--- platform output: the end of `hawk logs ev-1`"));
  CHECK_THAT(m, Catch::Contains("[ERROR] pull failed ?]0;owned??[2J ?\n--- end of platform output ---"));
  CHECK_THAT(m, Catch::Contains("] line 499\n"));
  CHECK_THAT(m, !Catch::Contains("] line 400\n"));  // only the last lines
  CHECK(m.find('\x1b') == std::string::npos);
  CHECK(m.size() < kLogTailBytes + 1500);
  REQUIRE(fake.count("logs") == 1);
  for (const auto& c : fake.calls) {
    if (c.at(1) == "logs") CHECK(c == std::vector<std::string>{"/opt/hawk", "logs", "ev-1", "-n", "100"});
    if (c.at(1) == "status")
      CHECK(c == std::vector<std::string>{"/opt/hawk", "status", "ev-1", "--hours", "0"});
  }
  CHECK(fake.count("delete") == 1);
}

TEST_CASE("hawk backend: a CLI that starts its login stops the deploy at once", "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit6";
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  SECTION("at start: nothing was started, nothing to delete") {
    FakeHawk fake;
    fake.needs_login_in = "start";
    HawkBackend backend(profile, options(fake, dir));
    CHECK_THROWS_WITH(backend.deploy(request()), Catch::Contains("needs a person to log in") &&
                                                     Catch::Contains("Run `hawk login` on this machine") &&
                                                     Catch::Contains("No valid access token found"));
    CHECK(fake.calls.size() == 1);
    CHECK_THROWS_WITH(backend.submit_expecting_refusal(request(), std::chrono::seconds(5)),
                      Catch::Contains("hawk login"));
  }
  SECTION("while waiting for the sandbox: no more polling, the eval is deleted") {
    FakeHawk fake;
    fake.needs_login_in = "ssh-command";
    HawkBackend backend(profile, options(fake, dir));
    CHECK_THROWS_WITH(backend.deploy(request()), Catch::Contains("ssh-command needs a person to log in"));
    CHECK(fake.count("ssh-command") == 1);
    CHECK(fake.count("status") == 0);
    CHECK(fake.count("delete") == 1);
  }
}

TEST_CASE("hawk backend: the profile's start_args follow the harness's own words", "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit7";
  std::string yaml = kProfile;
  const std::string anchor = "  start_timeout_s: 3\n";
  yaml.insert(
      yaml.find(anchor) + anchor.size(),
      "  start_args: [--secret, OPENAI_API_KEY, --secrets-file, env/staging.env, --image-tag=1.2.3, "
      "--no-rewrite, --secret=HF_TOKEN]\n  human_agent: { package: inspect-ai, name: human_agent }\n");
  auto profile = scenario::parse_deployment(yaml, "/etc/isoharness/staging.yaml");
  FakeHawk fake;
  HawkBackend backend(profile, options(fake, dir));
  auto h = backend.deploy(request());
  CHECK(fake.calls.at(0) == std::vector<std::string>{"/opt/hawk", "human", "eval", "start", fake.calls[0][4],
                                                     "--human", "alice", "--skip-confirm", "--secret",
                                                     "OPENAI_API_KEY", "--secrets-file",
                                                     "/etc/isoharness/env/staging.env", "--image-tag",
                                                     "1.2.3", "--no-rewrite", "--secret", "HF_TOKEN"});
  backend.destroy(h);
}

TEST_CASE("deployment profile: hawk.start_args takes only flags known to be safe, each in its shape",
          "[hawk]") {
  auto errors_of = [](const std::string& start_args) {
    try {
      scenario::parse_deployment("backend: hawk\nhawk:\n  human: alice\n  start_args:\n" + start_args,
                                 "bad.yaml");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(errors_of("    - --image-tag\n    - v1.2\n") == "(accepted)");
  const std::string m = errors_of(
      "    - --log-dir-allow-dirty\n"               // 5: a real flag, not on the list
      "    - --human=bob\n"                         // 6: the harness's own
      "    - --secret\n    - 'A B'\n"               // 7: not a variable name
      "    - --secrets-file=-rf\n"                  // 9: looks like a flag
      "    - --no-rewrite=yes\n"                    // 10: a switch
      "    - --image-tag=a\n    - --image-tag=b\n"  // 12: twice
      "    - 7\n"                                   // 13: not a string
      "    - --secret\n");                          // 14: no value
  CHECK_THAT(m, Catch::Contains("bad.yaml:5") &&
                    Catch::Contains("'--log-dir-allow-dirty' is not a flag known to be safe"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:6") && Catch::Contains("'--human' is not a flag known to be safe"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:7") &&
                    Catch::Contains("--secret 'A B' is not an environment variable name"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:9") && Catch::Contains("--secrets-file '-rf' is not a file path"));
  CHECK_THAT(
      m, Catch::Contains("bad.yaml:10") && Catch::Contains("--no-rewrite is a switch and takes no value"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:12") && Catch::Contains("--image-tag is given twice"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:13") && Catch::Contains("every word must be a string"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:14") && Catch::Contains("--secret needs a value"));
  CHECK_THAT(errors_of("    notalist: 1\n"), Catch::Contains("must be a list of words"));
}

TEST_CASE("hawk backend: the CLI's Error is the deploy error; nothing to delete", "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit3";
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  FakeHawk fake;
  fake.start_exit = 1;
  fake.start_err = "Error: isolation strict needs a hardened runtime class\n";
  HawkBackend backend(profile, options(fake, dir));
  CHECK_THROWS_WITH(backend.deploy(request()),
                    Catch::Contains("(3 tries)") &&
                        Catch::Contains("exited 1: Error: isolation strict needs a hardened runtime class"));
  CHECK(fake.count("start") == 3);  // hawk.start_retries (2) more, then the platform's message
  CHECK(fake.count("delete") == 0);
}

TEST_CASE("start failures: the quota is back-pressure, others are tried a bounded number of times",
          "[hawk]") {
  CHECK(classify_start_failure(make_error("Error: Too many live evals: user alice has 8", 1)) ==
        StartFailure::quota);
  CHECK(classify_start_failure(make_error("exited 1: Error: 429 Too Many Requests", 1)) ==
        StartFailure::quota);
  CHECK(classify_start_failure(make_error("Error: eval quota exceeded", 1)) == StartFailure::quota);
  CHECK(classify_start_failure(make_error("Error: 503 Service Unavailable", 1)) == StartFailure::retry);
  CHECK(classify_start_failure(make_error("no answer before its deadline", -1)) == StartFailure::retry);
  CHECK(classify_start_failure(make_error("Error: no such option: --x", 2)) == StartFailure::final);
  CHECK(classify_start_failure(make_error("needs a person to log in", kNeedsLogin)) == StartFailure::final);
  using std::chrono::milliseconds;
  CHECK(retry_pause(1, milliseconds(2000), 0.5) == milliseconds(2000));
  CHECK(retry_pause(2, milliseconds(2000), 0.0) == milliseconds(2000));
  CHECK(retry_pause(3, milliseconds(2000), 0.99) == milliseconds(11920));
  CHECK(retry_pause(40, milliseconds(2000), 0.5) == milliseconds(30000));  // capped

  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit8";
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  SECTION("a start that fails twice, then works") {
    FakeHawk fake;
    fake.start_script = {{1, "Error: 503 Service Unavailable\n"}, {1, "Error: 503 Service Unavailable\n"}};
    HawkBackend backend(profile, options(fake, dir));
    auto h = backend.deploy(request());
    CHECK(h.facts.extra["hawk_start_tries"] == 3);
    CHECK(h.facts.extra["hawk_start_retries"] == 2);
    CHECK(h.facts.extra["hawk_quota_waits"] == 0);
    CHECK(g_pauses.size() == 2);
    backend.destroy(h);
  }
  SECTION("quota refusals wait and do not use up the retries") {
    FakeHawk fake;
    for (int i = 0; i < 5; ++i)
      fake.start_script.emplace_back(1, "Error: Too many live evals: the limit is 2\n");
    HawkBackend backend(profile, options(fake, dir));
    auto h = backend.deploy(request());
    CHECK(h.facts.extra["hawk_start_tries"] == 6);
    CHECK(h.facts.extra["hawk_quota_waits"] == 5);
    CHECK(h.facts.extra["hawk_start_retries"] == 0);
    REQUIRE(g_pauses.size() == 5);
    for (auto p : g_pauses) CHECK(p.count() >= 1000);
    backend.destroy(h);
  }
  SECTION("quota refusals end after hawk.quota_wait_s") {
    std::string yaml = kProfile;
    const std::string anchor = "  start_timeout_s: 3\n";
    yaml.insert(yaml.find(anchor) + anchor.size(), "  quota_wait_s: 0\n  max_live_evals: 8\n");
    auto limited = scenario::parse_deployment(yaml, "staging.yaml");
    CHECK(limited.hawk->max_live_evals == 8);
    FakeHawk fake;
    fake.start_exit = 1;
    fake.start_err = "Error: Too many live evals: the limit is 2\n";
    HawkBackend backend(limited, options(fake, dir));
    CHECK_THROWS_WITH(backend.deploy(request()),
                      Catch::Contains("hawk.quota_wait_s") && Catch::Contains("Too many live evals"));
    CHECK(fake.count("start") == 1);
  }
}

TEST_CASE("hawk backend: interrupted while waiting deletes the eval", "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit4";
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  FakeHawk fake;
  fake.ssh_failures_before_ready = -1;
  std::atomic<bool> stop{true};
  auto o = options(fake, dir);
  o.interrupted = &stop;
  HawkBackend backend(profile, o);
  CHECK_THROWS_WITH(backend.deploy(request()), Catch::Contains("interrupted"));
  CHECK(fake.count("delete") == 1);
}

TEST_CASE("deployment profile: the hawk sections, checked with file and line", "[hawk]") {
  auto p = scenario::parse_deployment(kProfile, "staging.yaml");
  REQUIRE(p.hawk.has_value());
  CHECK(p.hawk->human == "alice");
  CHECK(p.hawk->start_timeout_s == 3);
  REQUIRE(p.egress.has_value());
  auto targets = deploy::probe_targets(p);
  // The canary; metadata plain, with GCE's header, for an IMDSv2 token, and on UDP; the API.
  REQUIRE(targets.size() == 6);
  CHECK(targets[0].name == "internet-canary");
  CHECK(targets[0].domain == "canary.example.com");
  CHECK(targets[1].role == "metadata");
  CHECK(targets[1].domain.empty());
  CHECK(targets[2].name == "metadata-google");
  CHECK(targets[2].proto == "http-google");
  CHECK(targets[3].name == "metadata-imds-token");
  CHECK(targets[3].proto == "http-imds-token");
  CHECK(targets[4].name == "metadata-udp");
  CHECK(targets[4].role == "metadata");
  // The domain itself, then its scope: port 22, SNI, a fronted SNI, a fronted Host ("*" is no name).
  const auto scoped = deploy::allowed_domain_targets(p, {"target.example.com", "*"});
  REQUIRE(scoped.size() == 7);
  CHECK(scoped[1].name == "allowed-target.example.com-port-22");
  CHECK(scoped[1].port == 22);
  CHECK(scoped[3].proto == "tls");
  CHECK(scoped[3].server_name == deploy::kFrontedName);
  CHECK(scoped[3].domain == deploy::kFrontedName);
  CHECK(scoped[4].proto == "http");
  CHECK(scoped[4].port == 80);
  // UDP at the allowed domain, as the local world's target-udp; then its unlisted port.
  CHECK(scoped[5].name == "allowed-target.example.com-udp");
  CHECK(scoped[5].proto == "udp");
  CHECK(scoped[5].host == "target.example.com");
  CHECK(scoped[5].port == 53);
  CHECK(scoped[6].name == "allowed-target.example.com-port-unlisted");
  CHECK(scoped[6].port == 8444);
  // allowDomainsPorts' entries for the domain, each on its transport.
  const nlohmann::json expect = {
      {"allow_domains_ports",
       {{{"port", 8443}, {"protocol", "TCP"}}, {{"port", 5353}, {"protocol", "ANY"}}}}};
  std::vector<std::string> ported;
  for (const auto& t : deploy::allowed_domain_targets(p, {"target.example.com"}, expect))
    ported.push_back(t.name + " " + t.proto + " " + std::to_string(t.port));
  CHECK(ported ==
        std::vector<std::string>{
            "allowed-target.example.com tcp " + std::to_string(p.egress->allowed_domain_port),
            "allowed-target.example.com-port-22 tcp 22", "allowed-target.example.com-sni tls 443",
            "allowed-target.example.com-sni-fronted tls 443",
            "allowed-target.example.com-host-fronted http 80", "allowed-target.example.com-udp udp 53",
            "allowed-target.example.com-port-8443 tcp 8443", "allowed-target.example.com-port-5353 tcp 5353",
            "allowed-target.example.com-udp-5353 udp 5353",
            "allowed-target.example.com-port-unlisted tcp 8444"});
  REQUIRE(p.node_class("tier") != nullptr);
  CHECK(p.node_class("tier")->env.at(0).second == "https://hawk.example.com");

  auto bad = [](const std::string& yaml) {
    try {
      scenario::parse_deployment(yaml, "bad.yaml");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_THAT(bad("backend: hawk\n"), Catch::Contains("needs a hawk: section"));
  CHECK_THAT(bad("backend: kube\n"), Catch::Contains("bad.yaml:1"));
  std::string m =
      bad("backend: hawk\nhawk:\n  human: alice\n  sandbox_host_keys: sometimes\n  start_timeout_s: -1\n"
          "  jumphost_host_key: nope\n  colour: red\negress:\n  metadata: 169.254.169.254\n"
          "node_classes:\n  tier: { config_overrides: { isolation: standard } }\n");
  CHECK_THAT(m, Catch::Contains("bad.yaml:4") && Catch::Contains("first-use or pinned"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:5") && Catch::Contains("start_timeout_s"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:6") && Catch::Contains("OpenSSH public key line"));
  CHECK_THAT(m, Catch::Contains("unknown key 'colour'"));
  CHECK_THAT(m, Catch::Contains("bad.yaml:9") && Catch::Contains("host:port"));
  CHECK_THAT(m, Catch::Contains("may not set 'isolation'"));
  CHECK_THAT(bad("backend: hawk\nhawk: { cli: hawk }\n"), Catch::Contains("hawk.human is required"));
  std::string placement =
      bad("backend: hawk\nhawk: { human: alice }\nnode_classes:\n"
          "  tier: { node_selector: { 'bad key!': x } }\n"
          "  non-tier: { tolerations: [ { key: a, operator: Sometimes } ] }\n"
          "  gpu: { config_overrides: { sandbox_placement: {} }, node_selector: [a] }\n");
  CHECK_THAT(placement, Catch::Contains("bad.yaml:4") && Catch::Contains("'bad key!' must be a label key"));
  CHECK_THAT(placement, Catch::Contains("bad.yaml:5") && Catch::Contains("is not a toleration"));
  CHECK_THAT(placement, Catch::Contains("may not set 'sandbox_placement'"));
  CHECK_THAT(placement, Catch::Contains("node_selector must map label keys"));
  CHECK_THAT(bad("backend: hawk\nhawk:\n  human: alice\n  jumphost_user: 'no way'\n  sandbox_user: -x\n"),
             Catch::Contains("bad.yaml:4") &&
                 Catch::Contains("hawk.jumphost_user 'no way' is not a user name") &&
                 Catch::Contains("bad.yaml:5") && Catch::Contains("hawk.sandbox_user '-x'"));
  auto users = scenario::parse_deployment(
      "backend: hawk\nhawk: { human: alice, jumphost_user: baseliner, sandbox_user: agent }\n", "u.yaml");
  CHECK(users.hawk->jumphost_user == "baseliner");
  CHECK(users.hawk->sandbox_user == "agent");

  auto local = scenario::parse_deployment("backend: local\n", "local.yaml");
  CHECK(deploy::probe_targets(local).size() > 5);  // the local world's
  CHECK_THROWS_WITH(deploy::make_backend(scenario::BackendKind::local, p, {"abc", "/tmp", false, nullptr}),
                    Catch::Contains("is for backend 'hawk'"));
  auto unpinned = scenario::parse_deployment("backend: hawk\nhawk: { human: alice }\n", "u.yaml");
  CHECK_THROWS_WITH(
      deploy::make_backend(scenario::BackendKind::hawk, unpinned, {"abc", "/tmp", false, nullptr}),
      Catch::Contains("jumphost_host_key is required"));
}

TEST_CASE("refusal scenarios: expect, reason, or_never_running", "[hawk]") {
  auto s = scenario::parse_scenario(
      "expect: refused\nreason: below\neval_set:\n  tasks:\n    - name: t\n"
      "      items: [{ name: i }]\n",
      "r.yaml");
  CHECK(s.expect_refused);
  CHECK(s.refusal_reason == "below");
  CHECK_FALSE(s.refusal_or_never_running);
  CHECK_FALSE(scenario::parse_scenario("eval_set:\n  tasks: [{ name: t, items: [{ name: i }] }]\n", "n.yaml")
                  .expect_refused);
  CHECK_THROWS_WITH(
      scenario::parse_scenario("expect: accepted\neval_set:\n  tasks: [{ name: t, items: [{ name: i }] }]\n",
                               "bad.yaml"),
      Catch::Contains("bad.yaml:1") && Catch::Contains("expect must be 'refused'"));
  CHECK_THROWS_WITH(scenario::parse_scenario(
                        "reason: x\neval_set:\n  tasks: [{ name: t, items: [{ name: i }] }]\n", "bad.yaml"),
                    Catch::Contains("go with expect: refused"));
}

TEST_CASE("every backend's egress targets carry names isoprobe accepts", "[hawk]") {
  auto p = scenario::parse_deployment(kProfile, "staging.yaml");
  const std::string long_domain = std::string(60, 'a') + ".example.com";
  std::vector<deploy::EgressTarget> all = deploy::probe_targets(p);
  for (auto& t : deploy::allowed_domain_targets(p, {"target.example.com", long_domain, "x_y.example.com"}))
    all.push_back(t);
  auto local = scenario::parse_deployment("backend: local\n", "local.yaml");
  for (auto& t : deploy::probe_targets(local)) all.push_back(t);
  for (const auto& t : all) {
    INFO(t.name);
    CHECK(deploy::egress_target_name_ok(t.name));
  }
  for (const auto& targets : {deploy::probe_targets(p), deploy::probe_targets(local)}) {
    std::set<std::string> names;  // unique within one backend's set
    for (const auto& t : targets) CHECK(names.insert(t.name).second);
  }
  CHECK(deploy::allowed_domain_target_name("target.example.com") == "allowed-target.example.com");
  const std::string shortened = deploy::allowed_domain_target_name(long_domain);
  CHECK(shortened.size() == 64);
  CHECK(shortened != deploy::allowed_domain_target_name(std::string(61, 'a') + ".example.com"));
  CHECK_FALSE(deploy::egress_target_name_ok("allowed:target.example.com"));
  CHECK_FALSE(deploy::egress_target_name_ok(""));
  CHECK_FALSE(deploy::egress_target_name_ok(std::string(65, 'a')));
}

TEST_CASE("deployment profile: hawk.max_live_evals, quota_wait_s and start_retries, bounded", "[hawk]") {
  auto bad = [](const std::string& yaml) {
    try {
      scenario::parse_deployment(yaml, "bad.yaml");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  auto users = scenario::parse_deployment("backend: hawk\nhawk: { human: alice }\n", "u.yaml");
  CHECK(users.hawk->max_live_evals == 0);  // not given: --parallel bounds the run
  CHECK(users.hawk->start_retries == 2);
  CHECK_THAT(bad("backend: hawk\nhawk:\n  human: alice\n  max_live_evals: 0\n  start_retries: 11\n"
                 "  quota_wait_s: x\n"),
             Catch::Contains("bad.yaml:4") &&
                 Catch::Contains("hawk.max_live_evals must be a whole number of evals from 1") &&
                 Catch::Contains("bad.yaml:5") && Catch::Contains("hawk.start_retries must be") &&
                 Catch::Contains("bad.yaml:6") && Catch::Contains("hawk.quota_wait_s must be"));
}

TEST_CASE("login prompts by their shape, on stdout and stderr", "[hawk]") {
  auto err = [](const std::string& t) { return login_prompt(t, t.size(), Stream::err); };
  auto out = [](const std::string& t) { return login_prompt(t, t.size(), Stream::out); };
  // The CLI's own words, on either stream (versions before late 2025 wrote them to stdout).
  CHECK_THAT(out("No valid access token found. Logging in...\n"),
             Catch::Contains("No valid access token found") && Catch::Contains("on stdout"));
  CHECK_FALSE(err("Visit the following URL to finish logging in:\n").empty());
  // Other words: a sign-in URL with a user code, a URL carrying a code, a device-code phrase.
  CHECK_FALSE(
      err("Authentication required.\nOpen https://id.example.com/device in a browser and enter QXRT-PLMN\n")
          .empty());
  CHECK_FALSE(out("Go to https://id.example.com/x?code=AB12 to continue\n").empty());
  CHECK_FALSE(err("Waiting for the device code to be approved\n").empty());
  CHECK_FALSE(err("Please sign in to continue: https://auth.example.com/activate\n").empty());
  // Not a person awaited: a refresh, an error with a link, a UUID, JSON and log entries on stdout.
  CHECK(err("Access token missing or expiring soon, refreshing\n").empty());
  CHECK(err("Error: 500 Internal Server Error\nsee https://status.example.com/incidents/42\n").empty());
  CHECK(err("Error: job 3f2a9c1e-77b0-4d7e-9a51-0c2f8e6d1b2a failed: https://x.example.com/j\n").empty());
  CHECK(out("{\"pod_status\": {\"pods\": [{\"message\": \"No valid access token found. Logging in...\"}]}}\n")
            .empty());
  CHECK(
      out("[2026-12-02 01:00:00Z] [INFO ] sandbox: Logging in to https://x.example.com/activate\n").empty());
  CHECK(out("Your sandbox is ready. Connect with:\n\n  ssh -J jump@198.51.100.1 agent@192.0.2.2\n").empty());
  // A prompt past stdout's opening bytes is not read (what follows a command's output is its
  // output); on stderr only the fresh bytes and a little before them are read again.
  const std::string late = std::string(kStdoutPromptWindow, 'x') + "\nLogging in...\n";
  CHECK(login_prompt(late, 15, Stream::out).empty());
  CHECK_FALSE(login_prompt(late, 15, Stream::err).empty());
  const std::string old_prompt = "Logging in...\n" + std::string(4096, 'x') + "\n";
  CHECK(login_prompt(old_prompt, 100, Stream::err).empty());
}

TEST_CASE("hawk backend: the login pre-flight before the first start", "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit-login";
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  SECTION("a token: asked once per node class, the starts go on, the token kept nowhere") {
    FakeHawk fake;
    HawkBackend backend(profile, options(fake, dir));
    auto a = backend.deploy(request());
    fake.ssh_failures_before_ready = 0;
    auto b = backend.deploy(request());
    CHECK(fake.token_asks == 1);
    CHECK(fake.count("start") == 2);
    CHECK(a.facts.to_json().dump().find("secret") == std::string::npos);
    backend.destroy(a);
    backend.destroy(b);
  }
  SECTION("no usable token: the run stops before any eval is started, naming hawk login") {
    FakeHawk fake;
    fake.token = "logged-out";
    HawkBackend backend(profile, options(fake, dir));
    CHECK_THROWS_AS(backend.deploy(request()), RunStoppingError);
    CHECK_THROWS_WITH(backend.deploy(request()),
                      Catch::Contains("login pre-flight failed") && Catch::Contains("run `hawk login`"));
    CHECK_THROWS_AS(backend.submit_expecting_refusal(request(), std::chrono::seconds(5)), RunStoppingError);
    CHECK(fake.token_asks == 1);  // its answer is kept for the run
    CHECK(fake.calls.empty());    // nothing started
  }
  SECTION("the device login on stdout: stopped, the run stops before any start") {
    FakeHawk fake;
    fake.token = "prompt-stdout";
    HawkBackend backend(profile, options(fake, dir));
    CHECK_THROWS_WITH(backend.deploy(request()),
                      Catch::Contains("needs a person to log in") && Catch::Contains("on stdout"));
    CHECK(fake.calls.empty());
  }
  SECTION("a CLI with no such command: said on stderr, the starts go on") {
    FakeHawk fake;
    fake.token = "no-command";
    HawkBackend backend(profile, options(fake, dir));
    auto h = backend.deploy(request());
    CHECK(fake.count("start") == 1);
    backend.destroy(h);
  }
}

namespace {

std::string stuck_status(const std::string& phase, const std::string& containers, const std::string& events) {
  return R"({"pod_status": {"pods": [{"name": "runner", "component": "runner", "phase": "Running"},
    {"name": "sb", "namespace": "ev-1", "component": "sandbox", "phase": ")" +
         phase + R"(", "container_statuses": )" + containers + R"(, "events": )" + events + "}]}}";
}

// The item's error of a deploy whose sandbox never answers, and its timings.
std::pair<std::string, json> failed_deploy(const std::string& profile_yaml, FakeHawk& fake) {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit-stuck";
  auto profile = scenario::parse_deployment(profile_yaml, "staging.yaml");
  fake.ssh_failures_before_ready = -1;
  HawkBackend backend(profile, options(fake, dir));
  try {
    backend.deploy(request());
  } catch (const deploy::DeployFailed& e) {
    return {e.what(), e.timings()};
  }
  FAIL("the deploy did not fail with its timings");
  return {};
}

std::string with_hawk_keys(const std::string& lines) {
  std::string yaml = kProfile;
  const std::string anchor = "  start_timeout_s: 3\n";
  yaml.replace(yaml.find(anchor), anchor.size(), "  start_timeout_s: 60\n" + lines);
  return yaml;
}

}  // namespace

TEST_CASE("hawk backend: a sandbox pod held short of running is the item's error within its bound",
          "[hawk]") {
  const auto t0 = std::chrono::steady_clock::now();
  auto took = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  FakeHawk fake;
  SECTION("CrashLoopBackOff after N restarts, named with its restarts; no event listed") {
    fake.status_out = stuck_status(
        "Running",
        R"([{"name": "default", "state": "waiting", "reason": "CrashLoopBackOff", "message": "back-off 40s", "restart_count": 4}])",
        "[]");
    auto [m, timings] = failed_deploy(with_hawk_keys("  crash_loop_restarts: 4\n"), fake);
    CHECK_THAT(
        m, Catch::Contains("CrashLoopBackOff in pod ev-1/sb, container default (4 restarts): back-off 40s"));
    CHECK_THAT(m, Catch::Contains("after 4 restarts") && Catch::Contains("lists no event"));
    CHECK(timings.contains("hawk_held_s"));
  }
  SECTION("an image that cannot be pulled, after stuck_grace_s, with the last event") {
    fake.status_out = stuck_status(
        "Pending",
        R"([{"name": "default", "state": "waiting", "reason": "ImagePullBackOff", "message": "Back-off pulling"}])",
        R"([{"type": "Warning", "reason": "Failed", "message": "manifest unknown"}])");
    auto [m, timings] = failed_deploy(with_hawk_keys("  stuck_grace_s: 1\n"), fake);
    CHECK_THAT(m,
               Catch::Contains("ImagePullBackOff") && Catch::Contains("last event Failed: manifest unknown"));
    CHECK_THAT(m, Catch::Contains("(hawk.stuck_grace_s 1)"));
    CHECK(timings["hawk_stuck_s"].get<double>() >= 1.0);
  }
  SECTION("a container config error") {
    fake.status_out = stuck_status(
        "Pending",
        R"([{"name": "default", "reason": "CreateContainerConfigError", "message": "secret not found"}])",
        "[]");
    auto [m, timings] = failed_deploy(with_hawk_keys("  stuck_grace_s: 0\n"), fake);
    CHECK_THAT(m, Catch::Contains("CreateContainerConfigError") && Catch::Contains("secret not found"));
  }
  SECTION("Pending with FailedScheduling, after unschedulable_grace_s") {
    auto [m, timings] =
        failed_deploy(with_hawk_keys("  unschedulable_grace_s: 2\n"), fake);  // the fake's default
    CHECK_THAT(m, Catch::Contains("FailedScheduling in pod ev-1/sb: 0/3 nodes are available"));
    CHECK_THAT(m, Catch::Contains("(hawk.unschedulable_grace_s 2)"));
    CHECK(timings["hawk_held_s"].get<double>() >= 2.0);
  }
  CHECK(took() < 20);  // each well before start_timeout_s (60)
  CHECK(fake.count("delete") == 1);
}

TEST_CASE("hawk backend: a status 404 before the first pod is not yet, until start_timeout_s", "[hawk]") {
  FakeHawk fake;
  fake.status_out = "-";  // answered below as the API's 404
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit-404";
  auto profile = scenario::parse_deployment(kProfile, "staging.yaml");
  fake.ssh_failures_before_ready = 2;
  HawkOptions o = options(fake, dir);
  auto inner = o.runner;
  int not_found = 0;
  o.runner = [&](const std::vector<std::string>& argv, const RunOptions& ro) -> Expected<RunResult> {
    if (argv.at(1) != "status") return inner(argv, ro);
    ++not_found;
    RunResult r;
    r.exited = true;
    r.exit_code = 1;
    r.err = "Error: 404 Not Found\n{\"detail\": \"Job not found\"}\n";
    return r;
  };
  HawkBackend backend(profile, o);
  auto h = backend.deploy(request());  // the ssh line came; the 404s were only "not yet"
  CHECK(not_found >= 2);
  backend.destroy(h);
  fake.ssh_failures_before_ready = -1;
  std::string m;
  try {
    backend.deploy(request());
  } catch (const InfraError& e) {
    m = e.what();
  }
  CHECK_THAT(m, Catch::Contains("no sandbox answered within 3 s") && Catch::Contains("no pod for it yet"));
}

TEST_CASE("deployment profile: --no-rewrite needs the human-agent solver, which the config then names",
          "[hawk]") {
  std::string yaml = kProfile;
  const std::string anchor = "  start_timeout_s: 3\n";
  const auto at = yaml.find(anchor) + anchor.size();
  try {
    scenario::parse_deployment(std::string(yaml).insert(at, "  start_args: [--no-rewrite]\n"), "nr.yaml");
    FAIL("accepted");
  } catch (const UserError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("nr.yaml:11") && Catch::Contains("--no-rewrite") &&
                                          Catch::Contains("hawk.human_agent"));
  }
  CHECK_THROWS_WITH(scenario::parse_deployment(
                        std::string(yaml).insert(at, "  human_agent: { package: inspect-ai }\n"), "h.yaml"),
                    Catch::Contains("h.yaml:11") && Catch::Contains("needs package and name"));
  auto profile = scenario::parse_deployment(
      std::string(yaml).insert(
          at,
          "  start_args: [--no-rewrite]\n  human_agent: { package: \"inspect-ai==0.3.140\", "
          "name: inspect_ai/human_agent, args: { record_session: false } }\n"),
      "ok.yaml");
  REQUIRE(profile.hawk->human_agent);
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit-agent";
  FakeHawk fake;
  HawkBackend backend(profile, options(fake, dir));
  auto h = backend.deploy(request());
  json submitted = json::parse(scenario::read_input_file(fake.calls.at(0).at(4)));
  CHECK(submitted["solvers"] == json::parse(R"([{"package": "inspect-ai==0.3.140", "name": "inspect_ai",
                        "items": [{"name": "human_agent", "args": {"record_session": false}}]}])"));
  CHECK(fake.calls.at(0).back() == "--no-rewrite");
  backend.destroy(h);
  // Without human_agent the config names no solver (the platform puts in the operator's).
  FakeHawk plain;
  HawkBackend b2(scenario::parse_deployment(kProfile, "staging.yaml"), options(plain, dir));
  auto h2 = b2.deploy(request());
  CHECK_FALSE(json::parse(scenario::read_input_file(plain.calls.at(0).at(4))).contains("solvers"));
  b2.destroy(h2);
}

TEST_CASE("the keyring the hawk CLI would keep its login in", "[hawk]") {
  CHECK(script_interpreter("#!/usr/bin/python3") == "/usr/bin/python3");
  CHECK(script_interpreter("#!/usr/bin/env -S python3 -u") == "python3");
  CHECK(script_interpreter("#! /opt/venv/bin/python") == "/opt/venv/bin/python");
  CHECK(script_interpreter("\x7f"
                           "ELF")
            .empty());
  auto secret = judge_keyring("keyring.backends.SecretService.Keyring\n", "x");
  CHECK(secret.ok);
  CHECK(secret.backend == "keyring.backends.SecretService.Keyring");
  CHECK_FALSE(judge_keyring("keyring.backends.fail.Keyring\n", "x").ok);
  CHECK_FALSE(judge_keyring("keyring.backends.chainer.ChainerBackend\n", "x").ok);  // holds nothing
  CHECK(
      judge_keyring("keyring.backends.chainer.ChainerBackend\nkeyrings.alt.file.PlaintextKeyring\n", "x").ok);
  CHECK_FALSE(judge_keyring("", "x").ok);

  // The CLI's interpreter is asked, with argv only and a deadline.
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-unit-keyring";
  std::filesystem::create_directories(dir);
  const std::string cli = dir + "/hawk";
  std::ofstream(cli) << "#!/usr/bin/env python3\nimport sys\n";
  std::vector<std::string> asked;
  auto found = hawk_keyring(
      cli, [&](const std::vector<std::string>& argv, const RunOptions& o) -> Expected<RunResult> {
        asked = argv;
        CHECK(o.deadline <= std::chrono::seconds(15));
        RunResult r;
        r.exited = true;
        r.exit_code = 0;
        r.out = "keyring.backends.fail.Keyring\n";
        return r;
      });
  REQUIRE(asked.size() == 3);
  CHECK(asked[0] == "python3");
  CHECK(asked[1] == "-c");
  CHECK_FALSE(found.ok);
  CHECK(found.backend == "keyring.backends.fail.Keyring");
  CHECK_THAT(found.detail, Catch::Contains("every hawk call would start a device login"));
  CHECK_THAT(found.source, Catch::Contains(cli));
}
