// run_job and its verdict without root (harness/runner/sandbox_job.h): the fakes of
// runner_fakes.h stand in for the backend and the SSH transport, and a scripted sandbox
// answers the freshness checks, the markers and `isoprobe posture`. Each case reads the
// record run_job journals, as the reports and the result do.
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <thread>

#include "harness/common/error.h"
#include "harness/runner/check_tally.h"
#include "harness/runner/sandbox_job.h"
#include "tests/unit/policy_test_util.h"
#include "tests/unit/posture_fixture.h"
#include "tests/unit/runner_fakes.h"

using namespace isoharness;
using namespace isoharness::runner;
using nlohmann::json;

namespace {

// What isoprobe reports from a strict gVisor sandbox with nothing reachable (the fixture
// verify's tests judge too), vouching for the agent file of `box`; cap_eff is its
// effective capability set.
json strict_gvisor_posture(const test::FakeSandbox& box, const std::string& cap_eff = "0000000000000000") {
  json p = test::clean_posture(true, cap_eff);
  p["context"] = {{"verified_file", {{"bytes", box.agent_bytes}, {"sha256", box.agent_sha256}}}};
  return p;
}

Expected<transport::ExecResult> answer(std::string out, int exit_code = 0) {
  transport::ExecResult r;
  r.exit_code = exit_code;
  r.out = std::move(out);
  return r;
}

// A strict item, planned by the policy engine for the local deployment (under gVisor).
Job strict_job(int attempts = 1) {
  auto plan = test::plan_yaml(
      "eval_set:\n  isolation: {level: strict, non_root: true, read_only_root: true}\n  tasks:\n"
      "    - name: t\n      items:\n        - name: i\n");
  REQUIRE(plan.accepted());
  auto item = std::make_shared<policy::PlanItem>(plan.items.at(0));
  return Job{"strict", item, "gvisor", "tier", attempts, {}, nullptr};
}

// A fake run that judges what the verify unit tests judge: their host and targets.
void use_world(test::FakeRun& run) {
  run.settings.host.boot_id = "host-boot-id";
  run.settings.host.hostname = "vm";
  run.settings.host.pid1 = "init";
  run.settings.host.process_count = 120;
  run.settings.host.interfaces = {"lo", "eth0", "docker0"};
  run.settings.targets = {{"target", "target.example.com", 80, "http", "target.example.com", "internet"},
                          {"metadata", "169.254.169.254", 80, "http", "", "metadata"},
                          {"cidr-host", "198.51.100.10", 80, "tcp", "", "internet"},
                          {"dns", "target.example.com", 53, "dns", "target.example.com", "resolver"}};
}

const json* check_named(const json& record, const std::string& control) {
  for (const auto& c : record["checks"])
    if (c.value("control", "") == control) return &c;
  return nullptr;
}

std::string status_of(const json& record, const std::string& control) {
  const json* c = check_named(record, control);
  return c ? c->value("status", "") : "(absent)";
}

Verdict verdict_of_record(const json& record) {
  CheckTally t;
  add_record(t, record);
  return verdict_of(t);
}

const json runsc_facts = {{"runtime", "runsc"}, {"backend", "fake"}};

}  // namespace

TEST_CASE("run_job: a sound sandbox passes, and its record has every phase's part", "[runner]") {
  test::FakeRun run;
  use_world(run);
  run.box.posture = [&](const std::vector<std::string>&) {
    return answer(strict_gvisor_posture(run.box).dump());
  };
  test::FakeBackend backend({}, runsc_facts);
  JobContext ctx = run.ctx(backend);

  REQUIRE(run_job(strict_job(2), ctx) == 2);
  REQUIRE(run.records.size() == 2);
  // One attempt after the other: the run held one sandbox at a time, and none at the end.
  CHECK(run.state.most_held() == 1);
  CHECK(run.state.holding() == 0);
  const json& r = run.records[1];
  INFO(r.dump(2).substr(0, 4000));
  CHECK(verdict_of_record(r) == Verdict::pass);
  CHECK(r["id"] == "s2");
  CHECK(r["attempt"] == 2);
  CHECK(r["scenario"] == "strict");
  CHECK(r["runtime"] == "gvisor");
  CHECK(r["level"] == "strict");
  CHECK(r["error"].is_null());
  CHECK(r["posture"]["schema"] == "isoharness.posture/v1");
  CHECK(r["facts"]["runtime"] == "runsc");
  CHECK(r["facts"]["isoprobe_upload_bytes"] == 123456);
  CHECK(r["facts"]["isoprobe_upload_via"] == "exec");
  CHECK(r["facts"]["isoprobe_upload"]["via"] == "exec");
  CHECK(r["facts"]["isoprobe_upload"]["packing"] == "none");  // the fake sends it as is
  for (const char* key : {"deploy_s", "deploy_queue_s", "ssh_ready_s", "upload_s", "posture_s", "total_s"})
    CHECK(r["timings"].contains(key));
  CHECK_FALSE(r.contains("tampered"));
  CHECK_FALSE(r.contains("witness"));
  CHECK_FALSE(r.contains("siblings"));
  // The checks in the order of the phases: freshness first, the agent's vouching last.
  REQUIRE(r["checks"].size() > 6);
  CHECK(r["checks"][0]["control"] == "fresh_sandbox");
  CHECK(r["checks"][1]["control"] == "fresh_process");
  CHECK(r["checks"][2]["control"] == "fresh_dns");
  CHECK(r["checks"].back()["control"] == "agent_upload");
  CHECK(status_of(r, "agent_upload") == "pass");
  CHECK(status_of(r, "capabilities") == "pass");
  CHECK(status_of(r, "egress:metadata") == "pass");
  CHECK(status_of(r, "runtime_version") == "n/a");
  CHECK(status_of(r, "attempt_markers") == "(absent)");
  // Two sandboxes deployed and destroyed; markers left in each; the nonce on the command line.
  CHECK(backend.destroyed == 2);
  int markers = 0;
  for (const auto& argv : run.box.commands)
    markers += argv.size() > 2 && argv[2].find("setsid") != std::string::npos ? 1 : 0;
  CHECK(markers == 2);
  // Per attempt: the freshness checks, the probe, the markers.
  REQUIRE(run.box.commands.size() == 6);
  const auto& posture_argv = run.box.commands.at(4);
  REQUIRE(posture_argv.at(0) == ".isoprobe/isoprobe");
  const auto nonce = std::find(posture_argv.begin(), posture_argv.end(), "--nonce");
  REQUIRE(nonce + 1 < posture_argv.end());
  CHECK((nonce + 1)->size() == 16);
  // The journal holds what on_sandbox saw.
  CHECK(result_from_journal(run.journal.path())["sandboxes"] == json(run.records));
}

TEST_CASE("run_job: a control the sandbox lacks fails its check, and only that sandbox", "[runner]") {
  test::FakeRun run;
  use_world(run);
  run.box.posture = [&](const std::vector<std::string>&) {
    return answer(strict_gvisor_posture(run.box, "00000000a80425fb").dump());  // runc's default set
  };
  test::FakeBackend backend({}, runsc_facts);
  JobContext ctx = run.ctx(backend);
  REQUIRE(run_job(strict_job(), ctx) == 1);
  const json& r = run.records.at(0);
  INFO(r.dump(2).substr(0, 4000));
  CHECK(verdict_of_record(r) == Verdict::fail);
  CHECK(r["error"].is_null());
  CHECK(status_of(r, "capabilities") == "fail");
  CHECK_THAT(check_named(r, "capabilities")->value("reason", ""), Catch::Contains("capabilities"));
  CHECK(status_of(r, "no_new_privs") == "pass");
  CHECK(status_of(r, "agent_upload") == "pass");
  CHECK_FALSE(run.state.stopped());
}

TEST_CASE("run_job: an agent that does not vouch for the uploaded file makes every claim fail", "[runner]") {
  test::FakeRun run;
  use_world(run);
  run.box.posture = [&](const std::vector<std::string>&) {
    json p = strict_gvisor_posture(run.box);
    p["context"]["verified_file"]["sha256"] = std::string(64, 'b');  // another agent ran
    return answer(p.dump());
  };
  test::FakeBackend backend({}, runsc_facts);
  JobContext ctx = run.ctx(backend);
  REQUIRE(run_job(strict_job(), ctx) == 1);
  const json& r = run.records.at(0);
  CHECK(verdict_of_record(r) == Verdict::fail);
  CHECK(status_of(r, "agent_upload") == "fail");
  CHECK(status_of(r, "no_new_privs") == "fail");
  CHECK_THAT(check_named(r, "no_new_privs")->value("reason", ""), Catch::Contains("agent_upload"));
  // The harness's own checks, made before the document, stay as they were.
  CHECK(status_of(r, "fresh_sandbox") == "pass");
}

TEST_CASE("run_job: a sandbox that never comes up, or whose session dies, is its own error", "[runner]") {
  test::FakeRun run;
  use_world(run);
  run.box.posture = [&](const std::vector<std::string>&) {
    return answer(strict_gvisor_posture(run.box).dump());
  };

  SECTION("the deploy fails") {
    test::FakeBackend backend(std::map<std::string, std::string>{{"t/0-i", "infra"}}, runsc_facts);
    JobContext ctx = run.ctx(backend);
    Job job = strict_job(2);
    auto item = std::make_shared<policy::PlanItem>(*job.item);
    item->id = "t/0-i";
    job.item = item;
    REQUIRE(run_job(job, ctx) == 2);
    REQUIRE(run.records.size() == 2);
    CHECK(run.state.holding() == 0);  // a failed deploy is held no longer
    const json& r = run.records[0];
    CHECK(verdict_of_record(r) == Verdict::error);
    CHECK_THAT(r["error"].get<std::string>(), Catch::Contains("503"));
    CHECK(r["checks"].empty());
    CHECK(r["facts"] == json::object());
    CHECK(r["timings"].contains("total_s"));
    CHECK_FALSE(r.contains("stopped_run"));
    CHECK(run.reach.opened == 0);
  }
  SECTION("the session dies before the probe: the sandbox's error, not the run's") {
    run.box.shell = [](const std::vector<std::string>&) -> Expected<transport::ExecResult> {
      return Error{"channel closed by the peer"};
    };
    test::FakeBackend backend({}, runsc_facts);
    JobContext ctx = run.ctx(backend);
    REQUIRE(run_job(strict_job(2), ctx) == 2);
    const json& r = run.records.at(0);
    CHECK(verdict_of_record(r) == Verdict::error);
    CHECK_THAT(r["error"].get<std::string>(), Catch::Contains("exec in sandbox failed"));
    CHECK(r["posture"].is_null());
    CHECK(r["timings"].contains("ssh_ready_s"));
    CHECK_FALSE(r.contains("stopped_run"));
    CHECK_FALSE(run.state.stopped());
    CHECK(backend.destroyed == 2);
  }
}

TEST_CASE("run_job: a sandbox that dies midway, or refuses the markers, fails or errs alone", "[runner]") {
  test::FakeRun run;
  use_world(run);
  run.box.posture = [&](const std::vector<std::string>&) {
    return answer(strict_gvisor_posture(run.box).dump());
  };

  SECTION("the channel dies while the probe runs: the sandbox fails its posture check") {
    run.box.posture = [](const std::vector<std::string>&) -> Expected<transport::ExecResult> {
      return Error{"channel closed by the peer"};
    };
    test::FakeBackend backend({}, runsc_facts);
    JobContext ctx = run.ctx(backend);
    REQUIRE(run_job(strict_job(), ctx) == 1);
    const json& r = run.records.at(0);
    // The jump connection is alive, so it is the sandbox's doing and no error of the harness.
    CHECK(verdict_of_record(r) == Verdict::fail);
    CHECK(r["error"].is_null());
    CHECK(status_of(r, "posture") == "fail");
    CHECK_THAT(check_named(r, "posture")->value("reason", ""), Catch::Contains("channel closed"));
    CHECK(status_of(r, "fresh_sandbox") == "pass");
    CHECK(r["posture"].is_null());
  }
  SECTION("the jump connection dies while the probe runs") {
    run.box.posture = [&](const std::vector<std::string>&) -> Expected<transport::ExecResult> {
      run.reach.jump_lost = true;
      return Error{"the jump connection is closed"};
    };
    test::FakeBackend backend({}, runsc_facts);
    JobContext ctx = run.ctx(backend);
    REQUIRE(run_job(strict_job(), ctx) == 1);
    const json& r = run.records.at(0);
    CHECK(verdict_of_record(r) == Verdict::error);
    CHECK_THAT(r["error"].get<std::string>(), Catch::Contains("jump connection died"));
    CHECK_FALSE(r.contains("stopped_run"));
    CHECK_FALSE(run.state.stopped());
  }
  SECTION("the sandbox refuses the markers") {
    run.box.shell = [](const std::vector<std::string>& argv) -> Expected<transport::ExecResult> {
      if (argv.size() > 2 && argv[2].find("setsid") != std::string::npos) {
        auto r = test::clean_shell(argv);
        r->out = "\n" + argv[4] + " file 1\n";
        return r;
      }
      return test::clean_shell(argv);
    };
    test::FakeBackend backend({}, runsc_facts);
    JobContext ctx = run.ctx(backend);
    REQUIRE(run_job(strict_job(), ctx) == 1);
    const json& r = run.records.at(0);
    CHECK(verdict_of_record(r) == Verdict::fail);
    CHECK(r["error"].is_null());
    CHECK(r["checks"].back()["control"] == "attempt_markers");
    CHECK(status_of(r, "attempt_markers") == "fail");
  }
}

TEST_CASE("run_job: a hostile answer fails the posture check, never the run", "[runner]") {
  test::FakeRun run;
  use_world(run);
  test::FakeBackend backend({}, runsc_facts);
  std::string why;
  SECTION("output past the cap") {
    run.box.posture = [](const std::vector<std::string>&) {
      auto r = answer(std::string(4096, '{'));
      r->out_truncated = true;  // what the transport reports once a stream passes max_output
      return r;
    };
    why = "MiB";
  }
  SECTION("text that is no posture document") {
    run.box.posture = [](const std::vector<std::string>&) { return answer("{\"schema\": [1, 2"); };
    why = "no posture document";
  }
  SECTION("a probe past its deadline") {
    run.box.posture = [](const std::vector<std::string>&) {
      auto r = answer("", -1);
      r->timed_out = true;
      return r;
    };
    why = "deadline";
  }
  JobContext ctx = run.ctx(backend);
  REQUIRE(run_job(strict_job(2), ctx) == 2);
  REQUIRE(run.records.size() == 2);
  for (const auto& r : run.records) {
    CHECK(verdict_of_record(r) == Verdict::fail);
    CHECK(r["error"].is_null());
    CHECK(r["posture"].is_null());
    CHECK(status_of(r, "posture") == "fail");
    CHECK_THAT(check_named(r, "posture")->value("reason", ""), Catch::Contains(why));
    CHECK(status_of(r, "agent_upload") == "(absent)");
    CHECK(status_of(r, "attempt_markers") == "(absent)");
  }
  CHECK_FALSE(run.state.stopped());
}

TEST_CASE("run_job: a lost jumphost stops the run; one item's error does not", "[runner]") {
  test::FakeRun run;
  use_world(run);
  run.box.posture = [&](const std::vector<std::string>&) {
    return answer(strict_gvisor_posture(run.box).dump());
  };
  test::FakeBackend backend({}, runsc_facts);
  JobContext ctx = run.ctx(backend);

  run.reach.open_throws = [] { throw InfraError("cannot reach the jumphost 192.0.2.1:22 (3 tries)"); };
  CHECK(run_job(strict_job(), ctx) == 1);
  CHECK_FALSE(run.state.stopped());
  run.reach.open_throws = [] { throw RunStoppingError("cannot reach the jumphost 192.0.2.1:22 (3 tries)"); };
  CHECK(run_job(strict_job(3), ctx) == 1);
  CHECK(run_job(strict_job(), ctx) == 0);
  REQUIRE(run.records.size() == 2);
  CHECK_FALSE(run.records[0].contains("stopped_run"));
  CHECK(verdict_of_record(run.records[0]) == Verdict::error);
  CHECK(run.records[1]["stopped_run"] == true);
  CHECK(verdict_of_record(run.records[1]) == Verdict::error);
  CHECK(run.state.stopped());
  CHECK_THAT(run.state.stop_reason(), Catch::Contains("cannot reach the jumphost"));
  CHECK(backend.deployed.size() == 2);
  CHECK(backend.destroyed == 2);  // every deployed sandbox is torn down, also when the run stops
}

TEST_CASE("make_request: the one weakening hook, and a job naming weakenings needs it", "[runner]") {
  RunSettings settings;
  settings.run_id = "t1";
  settings.public_key_line = "ssh-ed25519 AAAAkey";
  Job job = strict_job();
  auto plain = make_request(job, 2, "s7", settings);
  CHECK(plain.name == "s7");
  CHECK(plain.attempt == 2);
  CHECK(plain.authorized_key == "ssh-ed25519 AAAAkey");
  CHECK(plain.values == job.item->values.get());
  CHECK(plain.test_weakenings.empty());

  job.weakenings = {"cap-sys-admin"};
  CHECK_THROWS_AS(make_request(job, 1, "s8", settings), InfraError);
  settings.weaken = [](const Job& j, deploy::SandboxRequest& request) {
    request.test_weakenings = j.weakenings;
    request.values["weakened"] = true;
  };
  auto weak = make_request(job, 1, "s8", settings);
  CHECK(weak.test_weakenings == std::vector<std::string>{"cap-sys-admin"});
  CHECK(weak.values["weakened"] == true);
}

TEST_CASE("run_job: a tampered run marks its records, a selftest job names its weakenings", "[runner]") {
  test::FakeRun run;
  use_world(run);
  run.box.posture = [&](const std::vector<std::string>&) {
    return answer(strict_gvisor_posture(run.box).dump());
  };
  run.settings.mark_tampered = true;
  run.settings.weaken = [](const Job&, deploy::SandboxRequest& request) { request.test_weakenings = {"x"}; };
  test::FakeBackend backend({}, runsc_facts);
  JobContext ctx = run.ctx(backend);
  Job job = strict_job();
  job.weakenings = {"w1"};
  REQUIRE(run_job(job, ctx) == 1);
  CHECK(run.records.at(0)["tampered"] == true);
  CHECK(run.records.at(0)["weakenings"] == json::array({"w1"}));
  CHECK(backend.requests.at(0).test_weakenings == std::vector<std::string>{"x"});
}

// hawk.max_live_evals: with a limit, a sandbox waits until another's destroy has returned,
// and a run that stops while it waits ends the wait with an error instead of a start.
TEST_CASE("RunState: held sandboxes stay within the live limit; a stop ends the wait", "[runner]") {
  RunState state;
  state.set_held_limit(2, std::chrono::seconds(3600));
  state.enter_held();
  state.enter_held();
  std::atomic<bool> third_in{false};
  std::thread third([&] {
    state.enter_held();
    third_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK_FALSE(third_in.load());  // two held: the third waits
  CHECK(state.holding() == 2);
  state.leave_held();
  third.join();
  CHECK(third_in.load());
  CHECK(state.holding() == 2);
  CHECK(state.most_held() == 2);
  state.stop_run("the jumphost is gone");
  CHECK_THROWS_AS(state.enter_held(), InfraError);
  CHECK(state.holding() == 2);
  state.leave_held();
  state.leave_held();
  CHECK(state.holding() == 0);
  RunState full;  // no room within the wait: an error, as a quota refusal's last try
  full.set_held_limit(1, std::chrono::seconds(0));
  full.enter_held();
  CHECK_THROWS_WITH(full.enter_held(), Catch::Contains("no room within 0 s"));
  CHECK(full.holding() == 1);
  RunState unbounded;  // no limit: never waits
  for (int i = 0; i < 5; ++i) unbounded.enter_held();
  CHECK(unbounded.most_held() == 5);
}

namespace {

// The names the posture command line gives the short deadline ("--blocked NAME"), and that
// deadline ("" when none).
std::pair<std::set<std::string>, std::string> blocked_on(const std::vector<std::string>& argv) {
  std::set<std::string> names;
  std::string deadline;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--blocked") names.insert(argv[i + 1]);
    if (argv[i] == "--blocked-deadline-ms") deadline = argv[i + 1];
  }
  return {names, deadline};
}

// The posture command line of one attempt of an item that allows target.example.com.
std::vector<std::string> posture_argv_of(test::FakeRun& run) {
  auto plan = test::plan_yaml(
      "eval_set:\n  isolation: {level: standard, allow_domains: [target.example.com]}\n  tasks:\n"
      "    - name: t\n      items:\n        - name: i\n");
  REQUIRE(plan.accepted());
  Job job{"standard", std::make_shared<policy::PlanItem>(plan.items.at(0)), "runc", "tier", 1, {}, nullptr};
  run.box.posture = [&](const std::vector<std::string>&) {
    return answer(strict_gvisor_posture(run.box).dump());
  };
  test::FakeBackend backend({}, runsc_facts);
  JobContext ctx = run.ctx(backend);
  REQUIRE(run_job(job, ctx) == 1);
  for (const auto& argv : run.box.commands)
    if (std::find(argv.begin(), argv.end(), "posture") != argv.end()) return argv;
  FAIL("no posture command ran");
  return {};
}

}  // namespace

TEST_CASE("run_job: the targets the plan closes get the short deadline, only where witnesses judge",
          "[runner]") {
  SECTION("witnesses judge: every closed target, no open one") {
    test::FakeRun run;
    use_world(run);
    run.settings.witness_waived = false;  // the fake run's default is witness: none
    run.settings.egress_deadline = std::chrono::milliseconds(2000);
    run.settings.blocked_deadline = std::chrono::milliseconds(300);
    const auto [names, deadline] = blocked_on(posture_argv_of(run));
    CHECK(deadline == "300");
    CHECK(names.count("metadata") == 1);
    CHECK(names.count("cidr-host") == 1);
    CHECK(names.count("target") == 0);  // allow_domains opens it: it keeps the egress deadline
  }
  SECTION("witness: none: the sandbox's report is all there is, every target waits the whole deadline") {
    test::FakeRun run;
    use_world(run);
    run.settings.blocked_deadline = std::chrono::milliseconds(300);
    run.settings.witness_waived = true;
    const auto [names, deadline] = blocked_on(posture_argv_of(run));
    CHECK(names.empty());
    CHECK(deadline.empty());
  }
  SECTION("no short deadline set, or none shorter than the egress deadline") {
    test::FakeRun run;
    use_world(run);
    run.settings.witness_waived = false;
    run.settings.egress_deadline = std::chrono::milliseconds(300);
    run.settings.blocked_deadline = std::chrono::milliseconds(300);
    CHECK(blocked_on(posture_argv_of(run)).first.empty());
  }
}
