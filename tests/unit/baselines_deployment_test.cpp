// Each record judged on its own deployment: a history of 5 platform nights (gvisor/tier
// 1.10x runc/tier) and 20 newer nights on a local 2-core box (7.8x). A record naming a
// deployment gets that deployment's ratio; one naming none gets --deployment's, or, with
// several deployments in the history and no flag, unknown, never the newest runs' ratio.
#include <catch2/catch.hpp>

#include "harness/baselines/baselines.h"
#include "harness/common/error.h"
#include "harness/history/history.h"
#include "reports/baselines_reports.h"
#include "tests/support/test_support.h"
#include "tests/unit/baselines_fixture.h"

using namespace isoharness;

namespace {

const std::string kCsv =
    "task,item,duration_s,recorded_at,runtime,node_class,deployment\n"
    "swe,platform,3600,2026-05-03,runc,tier,hawk/staging\n"
    "swe,localbox,3600,2026-05-20,runc,tier,local/local-2core\n"
    "swe,unnamed,3600,2026-05-03,runc,tier,\n"
    "swe,elsewhere,3600,2026-05-03,runc,tier,hawk/production\n";

nlohmann::json assess_mixed(const std::string& csv, const baselines::AssessOptions& options,
                            const std::string& at = "2026-06-01T00:00:00Z") {
  test::TempDir dir("ih-baselines-dep");
  const std::string path = (dir.path / "h.sqlite").string();
  test::make_two_deployment_history(path);
  const auto file = baselines::parse_baselines(csv, "b.csv", {"2026-12-01T00:00:00Z", at, std::nullopt});
  const history::Database db(path);
  return baselines::assess(file, baselines::read_history(db, at), {"gvisor", "tier", at}, {{}, "parity", {}},
                           options);
}

const nlohmann::json& record(const nlohmann::json& doc, const std::string& item) {
  for (const auto& r : doc["records"])
    if (r["item"] == item) return r;
  FAIL("no record " << item);
  return doc;
}

double ratio_of(const nlohmann::json& r) {
  REQUIRE(r["ratio"].is_object());
  return r["ratio"]["estimate"].get<double>();
}

}  // namespace

TEST_CASE("a record naming its deployment is judged on that deployment's runs only",
          "[baselines][deployment]") {
  const auto doc = assess_mixed(kCsv, {"", false, 5, 1.0});
  const auto& platform = record(doc, "platform");
  CHECK(platform["deployment"]["name"] == "hawk/staging");
  CHECK(platform["deployment"]["from"] == "record");
  CHECK(ratio_of(platform) == Approx(test::kPlatformRatio).epsilon(0.02));
  CHECK(platform["corrected_s"]["estimate"].get<double>() ==
        Approx(3600 * test::kPlatformRatio).epsilon(0.02));
  CHECK(platform["verdict"] == "comparable");
  CHECK(platform["source"]["deployment"] == "staging");
  CHECK(platform["nights"]["count"] == test::kPlatformNights);
  for (const auto& n : platform["nights"]["runs"]) CHECK(n["run"].get<std::string>().starts_with("p"));

  const auto& local = record(doc, "localbox");
  CHECK(local["deployment"]["name"] == "local/local-2core");
  CHECK(ratio_of(local) == Approx(test::kLocalBoxRatio).epsilon(0.02));
  CHECK(local["verdict"] == "adjust");
  CHECK(local["source"]["backend"] == "local");

  // A deployment the history has no run of: unknown, naming it and the ones it holds.
  const auto& elsewhere = record(doc, "elsewhere");
  CHECK(elsewhere["verdict"] == "unknown");
  CHECK(elsewhere["ratio"].is_null());
  CHECK(elsewhere["deployment"]["resolved"] == false);
  CHECK_THAT(elsewhere["reason"].get<std::string>(), Catch::Contains("hawk/production") &&
                                                         Catch::Contains("no parity run") &&
                                                         Catch::Contains("hawk/staging, local/local-2core"));
}

TEST_CASE("with several deployments and none named, a record is unknown: the newest runs are never guessed",
          "[baselines][deployment]") {
  const auto doc = assess_mixed(kCsv, {"", false, 5, 1.0});
  const auto& unnamed = record(doc, "unnamed");
  CHECK(unnamed["verdict"] == "unknown");
  CHECK(unnamed["ratio"].is_null());
  CHECK(unnamed["corrected_s"].is_null());
  CHECK(unnamed["source"].is_null());
  CHECK_THAT(unnamed["reason"].get<std::string>(), Catch::Contains("hawk/staging, local/local-2core") &&
                                                       Catch::Contains("--deployment") &&
                                                       Catch::Contains("deployment column"));
  CHECK(doc["deployment"]["name"].is_null());
  CHECK(doc["deployment"]["chosen"].is_null());
  CHECK(doc["deployment"]["deployments"] == nlohmann::json({"hawk/staging", "local/local-2core"}));
  CHECK(doc["summary"]["unknown"] == 2);
  // Even with --other-deployments: the default is not a question of missing runs.
  const auto other = assess_mixed(kCsv, {"", true, 5, 1.0});
  CHECK(record(other, "unnamed")["verdict"] == "unknown");
  CHECK(record(other, "elsewhere")["verdict"] == "unknown");

  // The issue's file as a new user writes it: a platform record, no deployment column,
  // no flag. It is never corrected with the local box's 7.8x.
  const auto plain = assess_mixed(
      "task,item,duration_s,recorded_at,runtime,node_class\nswe,hour,3600,2026-05-03,runc,tier\n",
      {"", false, 5, 1.0});
  CHECK(plain["records"][0]["verdict"] == "unknown");
  CHECK(plain["records"][0]["corrected_s"].is_null());
  // Every rendering says why.
  CHECK_THAT(baselines::to_text(plain), Catch::Contains("records naming no deployment are unknown"));
  CHECK_THAT(reports::render_baselines_markdown(plain),
             Catch::Contains("records naming no deployment are unknown"));
  CHECK_THAT(reports::render_baselines_html(plain),
             Catch::Contains("records naming no deployment are unknown"));
  CHECK_THAT(reports::render_baselines_csv(plain), Catch::Contains("deployment_used,deployment_from"));
}

TEST_CASE("--deployment judges the records naming none; a record's own column still wins",
          "[baselines][deployment]") {
  const auto doc = assess_mixed(kCsv, {"hawk/staging", false, 5, 1.0});
  CHECK(doc["deployment"]["name"] == "hawk/staging");
  CHECK(doc["deployment"]["chosen"] == "--deployment");
  const auto& unnamed = record(doc, "unnamed");
  CHECK(unnamed["deployment"]["from"] == "--deployment");
  CHECK(ratio_of(unnamed) == Approx(test::kPlatformRatio).epsilon(0.02));
  CHECK(ratio_of(record(doc, "localbox")) == Approx(test::kLocalBoxRatio).epsilon(0.02));
  CHECK(record(doc, "elsewhere")["verdict"] == "unknown");
  // The text shows which deployment judged a record that is not the default's.
  CHECK_THAT(baselines::to_text(doc), Catch::Contains("[local/local-2core]"));
}

TEST_CASE("with one deployment in the history, it is used and the document says so",
          "[baselines][deployment]") {
  // Before the first local night only the platform's runs are there.
  const auto doc = assess_mixed(
      "task,item,duration_s,recorded_at,runtime,node_class\nswe,hour,3600,2026-05-03,runc,tier\n",
      {"", false, 5, 1.0}, "2026-05-09T00:00:00Z");
  CHECK(doc["deployment"]["name"] == "hawk/staging");
  CHECK(doc["deployment"]["chosen"] == "the only deployment in the history");
  const auto& r = doc["records"][0];
  CHECK(r["deployment"]["from"] == "the only deployment in the history");
  CHECK(ratio_of(r) == Approx(test::kPlatformRatio).epsilon(0.02));
  const std::string said = "judged against hawk/staging (the only deployment in the history)";
  CHECK_THAT(baselines::to_text(doc), Catch::Contains(said));
  CHECK_THAT(reports::render_baselines_markdown(doc), Catch::Contains(said));
  CHECK_THAT(reports::render_baselines_html(doc), Catch::Contains(said));
  CHECK_THAT(reports::render_baselines_csv(doc),
             Catch::Contains("hawk/staging,the only deployment in the history"));
}

TEST_CASE("a record's deployment must be BACKEND/PROFILE, reported with file, line and field",
          "[baselines][deployment]") {
  const std::string csv =
      "task,item,duration_s,recorded_at,runtime,node_class,deployment\n"
      "swe,a,60,2026-05-03,runc,tier,staging\n"
      "swe,b,60,2026-05-03,runc,tier,hawk/stag ing\n"
      "swe,c,60,2026-05-03,runc,tier,hawk/staging\n";
  try {
    baselines::parse_baselines(csv, "b.csv", {"2026-12-01T00:00:00Z", "", std::nullopt});
    FAIL("accepted");
  } catch (const UserError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("b.csv:2: deployment: 'staging' is not BACKEND/PROFILE"));
    CHECK_THAT(what, Catch::Contains("b.csv:3: deployment: 'hawk/stag ing' is not BACKEND/PROFILE"));
    CHECK_THAT(what, !Catch::Contains("b.csv:4"));
  }
  const auto jsonl = baselines::parse_baselines(
      R"({"task":"swe","item":"a","duration_s":60,"recorded_at":"2026-05-03","runtime":"runc","node_class":"tier","deployment":"hawk/staging"})"
      "\n",
      "b.jsonl", {"2026-12-01T00:00:00Z", "", std::nullopt});
  CHECK(jsonl.records[0].deployment == "hawk/staging");
}
