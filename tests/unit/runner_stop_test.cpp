// What one sandbox's infrastructure failure does to the run (harness/runner/sandbox_job.h,
// docs/CONTRACTS.md §4.3): a failed deploy is that sandbox's error and the other jobs still
// deploy; a RunStoppingError stops every later start; the journal keeps the attempts not run.
#include <catch2/catch.hpp>
#include <map>
#include <mutex>

#include "harness/common/error.h"
#include "harness/runner/journal.h"
#include "harness/runner/sandbox_job.h"
#include "harness/runner/session.h"
#include "tests/support/test_support.h"
#include "tests/unit/runner_fakes.h"

using namespace isoharness;
using namespace isoharness::runner;

namespace {

Job job_for(const std::string& id, int attempts) {
  auto item = std::make_shared<policy::PlanItem>();
  item->id = id;
  item->task = "t";
  item->item = id;
  return Job{"sc", item, "runc", "tier", attempts, {}, nullptr};
}

}  // namespace

TEST_CASE("one sandbox's failed deploy is its own error; a run-stopping failure stops later starts",
          "[runner]") {
  SECTION("an item's error leaves the run going") {
    test::FakeRun run;
    test::FakeBackend backend(std::map<std::string, std::string>{{"a", "infra"}, {"b", "infra"}});
    JobContext ctx = run.ctx(backend);
    CHECK(run_job(job_for("a", 2), ctx) == 2);
    CHECK(run_job(job_for("b", 1), ctx) == 1);
    CHECK(backend.deployed == std::vector<std::string>{"a", "a", "b"});
    REQUIRE(run.records.size() == 3);
    for (const auto& r : run.records) {
      CHECK_THAT(r["error"].get<std::string>(), Catch::Contains("503 Service Unavailable"));
      CHECK_FALSE(r.contains("stopped_run"));
    }
    CHECK_FALSE(run.state.stopped());
    CHECK(run.state.stop_reason().empty());
  }
  SECTION("a run-stopping failure: no later attempt or job starts, and the reason is kept") {
    test::FakeRun run;
    test::FakeBackend backend(std::map<std::string, std::string>{{"a", "stop"}});
    JobContext ctx = run.ctx(backend);
    CHECK(run_job(job_for("a", 3), ctx) == 1);
    CHECK(run_job(job_for("b", 2), ctx) == 0);
    CHECK(backend.deployed == std::vector<std::string>{"a"});
    REQUIRE(run.records.size() == 1);
    CHECK(run.records[0]["stopped_run"] == true);
    CHECK(run.state.stopped());
    CHECK(run.state.stop_reason() == "the jumphost is gone");
  }
  SECTION("a signal: nothing starts, and the reason says so") {
    std::atomic<bool> interrupted{true};
    test::FakeRun run(&interrupted);
    test::FakeBackend backend;
    JobContext ctx = run.ctx(backend);
    CHECK(run_job(job_for("a", 2), ctx) == 0);
    CHECK(backend.deployed.empty());
    CHECK_THAT(run.state.stop_reason(), Catch::Contains("interrupted by a signal"));
  }
}

TEST_CASE("attempts not run: kept by the journal, counted as errors by the summary", "[runner]") {
  test::TempDir dir("ih-notrun");
  const nlohmann::json entry = {{"scenario", "sc"},
                                {"item_id", "a"},
                                {"runtime", "runc"},
                                {"node_class", "tier"},
                                {"attempt", 2},
                                {"not_run", true},
                                {"reason", "not run: the jumphost is gone"}};
  std::string path;
  {
    Journal journal(dir.str(),
                    {{"schema", "isoharness.result/v1"},
                     {"skipped", nlohmann::json::array({{{"scenario", "sc"}, {"reason", "plan"}}})}});
    journal.append("skipped", entry);
    path = journal.path();
  }
  nlohmann::json result = result_from_journal(path);
  REQUIRE(result["skipped"].size() == 2);
  CHECK(result["skipped"][1] == entry);
  const nlohmann::json summary = summarise(result, 0, "", false);
  CHECK(summary["not_run"] == 1);
  CHECK(summary["verdict"] == "error");
  result["skipped"].erase(1);
  CHECK(summarise(result, 0, "", false)["verdict"] == "pass");
}

TEST_CASE("an unwitnessed check makes the run's summary an error (exit 3) and lists it", "[runner]") {
  nlohmann::json result = {
      {"sandboxes", nlohmann::json::array(
                        {{{"id", "sb-a"},
                          {"error", nullptr},
                          {"checks", nlohmann::json::array(
                                         {{{"control", "kernel"}, {"status", "pass"}},
                                          {{"control", "egress:canary-tcp"},
                                           {"status", "unwitnessed"},
                                           {"reason", "egress: canary-tcp unwitnessed (rule B5)"}}})}}})},
      {"skipped", nlohmann::json::array()}};
  const nlohmann::json summary = summarise(result, 1, "", false);
  CHECK(summary["verdict"] == "error");
  CHECK(summary["unwitnessed"] == 1);
  CHECK(summary["unwitnessed_checks"] ==
        nlohmann::json::array({"sb-a egress:canary-tcp: egress: canary-tcp unwitnessed (rule B5)"}));
  result["summary"] = summary;
  CHECK(exit_code_of(result) == 3);
  result["sandboxes"][0]["checks"][1]["status"] = "pass";
  CHECK(summarise(result, 1, "", false)["verdict"] == "pass");
}
