// Refusal jobs (harness/runner/refusal.h): which scenarios become expected refusals (the
// `expect: refused` ones, and on a deployment without a hardened runtime class the ones
// refused only for want of it), and the fail_loudly verdict on what a backend answers.
#include <catch2/catch.hpp>
#include <fstream>
#include <optional>
#include <set>

#include "harness/common/error.h"
#include "harness/runner/journal.h"
#include "harness/runner/matrix.h"
#include "harness/runner/refusal.h"
#include "tests/support/test_support.h"
#include "tests/unit/runner_fakes.h"

using namespace isoharness;
using namespace isoharness::runner;

namespace {

std::string scenario_file(const std::string& name) {
  return test::source_dir() + "/scenarios/" + name;
}

scenario::DeploymentProfile deployment(const std::string& name) {
  return scenario::load_deployment(scenario_file("deployments/" + name));
}

const RefusalJob& job_named(const std::vector<RefusalJob>& jobs, const std::string& name) {
  for (const auto& j : jobs)
    if (j.scenario.name == name) return j;
  FAIL("no refusal job for " << name);
  throw std::logic_error("unreachable");
}

// A backend whose platform answers with `answer` (nullopt: no platform, the planner decides).
class AnsweringBackend : public deploy::Backend {
 public:
  explicit AnsweringBackend(std::optional<deploy::RefusalProbe> answer) : answer_(std::move(answer)) {}
  std::string name() const override { return "answering"; }
  deploy::SandboxHandle deploy(const deploy::SandboxRequest&) override {
    throw InfraError("refusal jobs never deploy a sandbox");
  }
  void destroy(const deploy::SandboxHandle&) noexcept override {}
  std::vector<deploy::EgressTarget> egress_targets() const override { return {}; }
  nlohmann::json context() const override { return nlohmann::json::object(); }
  std::optional<deploy::RefusalProbe> submit_expecting_refusal(const deploy::SandboxRequest& request,
                                                               std::chrono::seconds) override {
    submitted.push_back(request);
    return answer_;
  }
  std::vector<deploy::SandboxRequest> submitted;

 private:
  std::optional<deploy::RefusalProbe> answer_;
};

// Runs one refusal job against the backend and returns the record it journals.
nlohmann::json record_of(const RefusalJob& job, deploy::Backend& backend) {
  test::FakeRun run;
  JobContext ctx = run.ctx(backend);
  run_refusal(job, ctx);
  REQUIRE(run.records.size() == 1);
  CHECK(run.records[0]["id"] == "r1");
  return run.records[0];
}

}  // namespace

TEST_CASE("without a hardened runtime class, scenarios refused only for want of it are expected refusals",
          "[runner]") {
  const auto profile = deployment("local-no-hardened-class.yaml");
  REQUIRE_FALSE(profile.sandbox_runtime_class);
  std::vector<std::string> paths = {
      scenario_file("strict.yaml"),        scenario_file("mixed.yaml"),
      scenario_file("standard.yaml"),      scenario_file("gvisor-only.yaml"),
      scenario_file("strict-egress.yaml"), scenario_file("refused/unknown-level.yaml")};
  const auto jobs = take_refusals(paths, profile);
  std::set<std::string> names;
  for (const auto& j : jobs) names.insert(j.scenario.name);
  CHECK(names == std::set<std::string>{"strict", "mixed", "strict-egress", "refused-unknown-level"});
  CHECK(paths == std::vector<std::string>{scenario_file("standard.yaml"), scenario_file("gvisor-only.yaml")});

  const RefusalJob& strict = job_named(jobs, "strict");
  CHECK(strict.scenario.expect_refused);
  CHECK(strict.scenario.refusal_reason == kNoHardenedClassReason);
  CHECK_FALSE(strict.scenario.refusal_or_never_running);
  REQUIRE(strict.planner_errors.size() == 1);
  CHECK_THAT(strict.planner_errors[0], Catch::Contains("strict needs a hardened runtime class") &&
                                           Catch::Contains("'local-no-hardened-class' configures none"));
  CHECK_THAT(strict.rule, Catch::Contains("configures none refuses strict at submission"));
  CHECK_THAT(strict.item_id, Catch::StartsWith("cyber_recon/0-"));
  // A declared refusal keeps its own reason and is filed under the scenario.
  const RefusalJob& level = job_named(jobs, "refused-unknown-level");
  CHECK(level.scenario.refusal_reason == "unknown isolation level");
  CHECK(level.item_id == "refused-unknown-level/refusal");
  CHECK(level.rule == "an unknown isolation level is refused");

  // With a hardened class nothing but the declared refusal is taken.
  std::vector<std::string> again = {scenario_file("strict.yaml"),
                                    scenario_file("refused/unknown-level.yaml")};
  const auto with_class = take_refusals(again, deployment("local.yaml"));
  REQUIRE(with_class.size() == 1);
  CHECK(with_class[0].scenario.name == "refused-unknown-level");
  CHECK(again == std::vector<std::string>{scenario_file("strict.yaml")});
}

TEST_CASE("the strict item is the one submitted, and other errors stay bad input", "[runner]") {
  test::TempDir dir("ih-refusal");
  const std::string second = dir.str() + "/second.yaml";
  std::ofstream(second) << "name: second-strict\neval_set:\n  tasks:\n    - name: t\n      items:\n"
                           "        - { name: open }\n        - { name: locked, isolation: strict }\n";
  const std::string bad = dir.str() + "/bad.yaml";
  std::ofstream(bad) << "name: bad\neval_set:\n  isolation: strict\n  tasks:\n    - name: t\n      items:\n"
                        "        - { name: i, isolation: { level: strict, allow_domains: [\"*\"] } }\n";
  const auto profile = deployment("local-no-hardened-class.yaml");
  std::vector<std::string> paths = {second, bad};
  const auto jobs = take_refusals(paths, profile);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].task_index == 0);
  CHECK(jobs[0].item_index == 1);
  CHECK_THAT(jobs[0].item_id, Catch::StartsWith("t/1-locked"));
  // Refused for more than the missing class: planned as usual, so the run stops with exit 2
  // naming both problems.
  REQUIRE(paths == std::vector<std::string>{bad});
  CHECK_THROWS_WITH(plan_scenarios(paths, profile, false),
                    Catch::Contains("hardened runtime class") && Catch::Contains("name your targets"));

  AnsweringBackend platform(deploy::RefusalProbe{false, "eval hs-1 was started", false, ""});
  record_of(jobs[0], platform);
  REQUIRE(platform.submitted.size() == 1);
  CHECK(platform.submitted[0].task_index == 0);
  CHECK(platform.submitted[0].item_index == 1);
  CHECK(platform.submitted[0].eval_set["tasks"][0]["items"][1]["name"] == "locked");
}

TEST_CASE("fail_loudly: refused for the reason passes; accepted or another reason fails", "[runner]") {
  const auto profile = deployment("local-no-hardened-class.yaml");
  std::vector<std::string> paths = {scenario_file("strict.yaml")};
  const RefusalJob job = take_refusals(paths, profile).at(0);

  AnsweringBackend planner(std::nullopt);  // the local backend: the planner's errors answer
  const auto local = record_of(job, planner);
  REQUIRE(local["checks"].size() == 1);
  CHECK(local["checks"][0]["control"] == "fail_loudly");
  CHECK(local["checks"][0]["status"] == "pass");
  CHECK(local["facts"]["refused"] == true);
  CHECK_THAT(local["facts"]["refusal_message"].get<std::string>(),
             Catch::StartsWith("Error: ") && Catch::Contains("hardened runtime class"));
  CHECK(local["refusal"]["reason"] == kNoHardenedClassReason);
  CHECK(local["item_id"] == job.item_id);

  AnsweringBackend accepting(deploy::RefusalProbe{false, "eval hs-2 was started", false, ""});
  const auto accepted = record_of(job, accepting);
  CHECK(accepted["checks"][0]["status"] == "fail");
  CHECK_THAT(
      accepted["checks"][0]["reason"].get<std::string>(),
      Catch::Contains("the platform accepted 'strict', a config it must refuse (eval hs-2 was started)"));

  AnsweringBackend other(deploy::RefusalProbe{true, "hawk exited 1: Error: quota exceeded", false, ""});
  const auto wrong = record_of(job, other);
  CHECK(wrong["checks"][0]["status"] == "fail");
  CHECK_THAT(wrong["checks"][0]["reason"].get<std::string>(), Catch::Contains("not for the reason expected"));

  AnsweringBackend silent(
      deploy::RefusalProbe{true, "hawk exited 1: hardened runtime class missing", false, ""});
  CHECK(record_of(job, silent)["checks"][0]["status"] == "fail");  // no Error: message
}
