// harness/baselines: parsing baseline files (every bad record with line and field, at
// once), and every record of a 24-record file assessed against a real SQLite history of
// twelve parity nights with a runsc upgrade, checked against the same numbers computed
// here by hand from the parity results (the section's mix slowdowns, or harness/parity's
// compare and combine for a named mix), without calling the code under test.
#include "harness/baselines/baselines.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "harness/baselines/drift_since.h"
#include "harness/common/error.h"
#include "harness/history/history.h"
#include "harness/scenario/scenario.h"
#include "reports/baselines_reports.h"
#include "tests/support/test_support.h"
#include "tests/unit/baselines_fixture.h"

using namespace isoharness;

namespace {

const baselines::ParseOptions kOptions{"2026-12-01T00:00:00Z", "2026-06-20T00:00:00Z", std::nullopt};

std::vector<Diagnostic> errors_of(const std::string& text, const baselines::ParseOptions& o = kOptions) {
  try {
    (void)baselines::parse_baselines(text, "b.csv", o);
  } catch (const UserError& e) {
    return e.diagnostics();
  }
  return {};
}

bool has(const std::vector<Diagnostic>& errors, int line, const std::string& field,
         const std::string& words) {
  for (const auto& d : errors)
    if (d.file == "b.csv" && d.line == line && d.item == field && d.message.find(words) != std::string::npos)
      return true;
  return false;
}

const std::string kHeader = "task,item,duration_s,recorded_at,runtime,node_class\n";

}  // namespace

TEST_CASE("a CSV baseline file is read with its columns, quoting and dates", "[baselines]") {
  const auto f = baselines::parse_baselines(test::baselines_csv(), "b.csv", kOptions);
  CHECK(f.format == "csv");
  REQUIRE(f.records.size() == 24);
  CHECK(f.columns.back() == "notes");
  CHECK(f.records[3].recorded_utc == "2026-06-10T06:30:00Z");
  CHECK(f.records[3].duration_s == 1800.5);
  CHECK(f.records[2].mix == "compile_heavy");
  CHECK(f.records[6].mix.empty());  // "default"
  const auto q = baselines::parse_baselines(
      kHeader + "\"swe, v2\",\"say \"\"hi\"\"\",60,2026-01-02,runc,tier\n", "b.csv", kOptions);
  CHECK(q.records[0].task == "swe, v2");
  CHECK(q.records[0].item == "say \"hi\"");
}

TEST_CASE("JSON Lines records are read, sample_id standing in for item", "[baselines]") {
  const auto f = baselines::parse_baselines(
      "{\"task\":\"swe\",\"sample_id\":\"s1\",\"duration_s\":60,\"recorded_at\":\"2026-01-02\","
      "\"runtime\":\"runc\",\"node_class\":\"tier\",\"extra\":3}\n",
      "b.jsonl", kOptions);
  CHECK(f.format == "jsonl");
  REQUIRE(f.records.size() == 1);
  CHECK(f.records[0].item == "s1");
  CHECK(f.records[0].fields.at("extra") == "3");
}

TEST_CASE("every bad record is reported at once with its line and field", "[baselines]") {
  const std::string text = kHeader +
                           "swe,a,60,2026-01-02,runc,tier\n"      // line 2: good
                           "swe,b,-5,2026-01-02,runc,tier\n"      // 3: negative duration
                           "swe,c,60,2027-01-01,runc,tier\n"      // 4: in the future
                           "swe,d,sixty,2026-01-02,runc,tier\n"   // 5: malformed cell
                           "swe,e,60,2026-02-30,runc,tier\n"      // 6: not a date
                           "swe,f\xff,60,2026-01-02,runc,tier\n"  // 7: not UTF-8
                           "swe,g,60,2026-01-02,run c,tier\n"     // 8: not a runtime name
                           "swe,h,60,2026-07-01,runc,tier\n"      // 9: after --at
                           "swe,i,60,2026-01-02,runc\n";          // 10: a field short
  const auto e = errors_of(text);
  CHECK(e.size() == 8);
  CHECK(has(e, 3, "duration_s", "negative"));
  CHECK(has(e, 4, "recorded_at", "in the future"));
  CHECK(has(e, 5, "duration_s", "not a number"));
  CHECK(has(e, 6, "recorded_at", "not an ISO 8601"));
  CHECK(has(e, 7, "item", "0xFF"));
  CHECK(has(e, 8, "runtime", "not a name"));
  CHECK(has(e, 9, "recorded_at", "after the target date"));
  CHECK(has(e, 10, "", "5 fields, the header has 6"));
  const std::string message = UserError(e).what();
  CHECK(message.find("b.csv:3: duration_s: -5 is negative") != std::string::npos);
}

TEST_CASE("a record with a byte that is not UTF-8 still has its other fields checked", "[baselines]") {
  const auto e = errors_of(kHeader + "swe,a\xff,-1,2026-01-02,runc/x,tier\n");
  CHECK(e.size() == 3);
  CHECK(has(e, 2, "item", "0xFF"));
  CHECK(has(e, 2, "duration_s", "negative"));
  CHECK(has(e, 2, "runtime", "not a name"));
  const auto j = errors_of(
      "{\"task\":\"swe\",\"item\":\"a\xc3\",\"duration_s\":-1,\"recorded_at\":\"2026-01-02\","
      "\"runtime\":\"runc\"}\n");
  CHECK(has(j, 1, "item", "0xC3"));
  CHECK(has(j, 1, "duration_s", "negative"));
  CHECK(has(j, 1, "node_class", "missing"));
}

TEST_CASE("a missing column is named once, on the header line", "[baselines]") {
  const auto e = errors_of("task,item,duration_s,runtime,node_class\nswe,a,60,runc,tier\n");
  REQUIRE(e.size() == 1);
  CHECK(has(e, 1, "recorded_at", "missing column"));
  const auto j = errors_of(
      "{\"task\":\"swe\",\"item\":\"a\",\"duration_s\":60,\"runtime\":\"runc\",\"node_class\":\"t\"}\n");
  CHECK(has(j, 1, "recorded_at", "missing"));
}

TEST_CASE("a byte that is not UTF-8 in JSON Lines names its field", "[baselines]") {
  const auto e = errors_of(
      "{\"task\":\"swe\",\"item\":\"a\",\"human\":\"Jos\xe9\",\"duration_s\":60,\"recorded_at\":\"2026-01-"
      "02\","
      "\"runtime\":\"runc\",\"node_class\":\"tier\"}\n");
  REQUIRE(e.size() == 1);
  CHECK(has(e, 1, "human", "0xE9"));
}

TEST_CASE("a mix the scenario does not declare is bad input", "[baselines]") {
  baselines::ParseOptions o = kOptions;
  o.mixes = std::set<std::string>{"compile_heavy"};
  const auto e = errors_of(
      "task,item,duration_s,recorded_at,runtime,node_class,mix\nswe,a,60,2026-01-02,runc,tier,gpu_heavy\n",
      o);
  CHECK(has(e, 2, "mix", "unknown mix 'gpu_heavy'"));
}

TEST_CASE("ISO 8601 times are normalised to UTC", "[baselines]") {
  CHECK(baselines::normalise_time("2026-03-03") == "2026-03-03T00:00:00Z");
  CHECK(baselines::normalise_time("2026-03-03T10:00:00.25+02:00") == "2026-03-03T08:00:00Z");
  CHECK(baselines::normalise_time("2026-03-03 10:00Z") == "2026-03-03T10:00:00Z");
  CHECK(baselines::normalise_time("2024-02-29") == "2024-02-29T00:00:00Z");
  CHECK_FALSE(baselines::normalise_time("2026-02-29"));
  CHECK_FALSE(baselines::normalise_time("03/03/2026"));
  CHECK_FALSE(baselines::normalise_time("2026-03-03T25:00Z"));
}

TEST_CASE("a runc upgrade is the parity baseline cell's own change, listed once", "[baselines]") {
  const auto change = [](const std::string& field) {
    return nlohmann::json{{"run", "r5"},
                          {"started", "2026-06-05T02:00:00Z"},
                          {"direction", "faster"},
                          {"explanation", "coincides with a runtime change"},
                          {"context_changes", {{{"field", field}, {"runtime", true}}}},
                          {"notes", nlohmann::json::array()}};
  };
  const auto series = [&](const std::string& cell, const std::string& field) {
    return nlohmann::json{{"key", "parity/" + cell + "/mix"},
                          {"scenario", "parity"},
                          {"cell", cell},
                          {"workload", "mix"},
                          {"changes", {change(field)}}};
  };
  const nlohmann::json drift = {
      {"series",
       {series("gvisor/tier", "runc"), series("runc/non-tier", "runc"), series("gvisor/non-tier", "runc")}}};
  const auto own = baselines::changes_since(
      drift, {"runc/tier", "gvisor/tier", "runc", "runc/tier", "parity", "2026-06-01T00:00:00Z"});
  REQUIRE(own.size() == 2);  // the target's series, and the change once more from another cell
  CHECK(own[0]["own_cell"] == true);
  CHECK(own[1]["own_cell"] == true);
  const auto later = baselines::changes_since(
      drift, {"runc/tier", "gvisor/tier", "runc", "runc/tier", "parity", "2026-06-06T00:00:00Z"});
  CHECK(later.empty());
  const nlohmann::json runsc = {{"series", {series("runc/non-tier", "runsc")}}};
  CHECK(baselines::changes_since(
            runsc, {"runc/tier", "gvisor/tier", "runc", "runc/tier", "parity", "2026-06-01T00:00:00Z"})
            .empty());
}

TEST_CASE("a change seen on another deployment is not the record's", "[baselines]") {
  const auto series = [](const std::string& deployment, const std::string& run) {
    return nlohmann::json{{"key", "parity/gvisor/tier/mix"},
                          {"deployment", deployment},
                          {"scenario", "parity"},
                          {"cell", "gvisor/tier"},
                          {"workload", "mix"},
                          {"changes",
                           {{{"run", run},
                             {"started", "2026-06-05T02:00:00Z"},
                             {"direction", "slower"},
                             {"explanation", "no change recorded in the context"}}}}};
  };
  const nlohmann::json drift = {{"series", {series("local/local", "l5"), series("hawk/staging", "h5")}}};
  baselines::DriftQuery q{"runc/tier", "gvisor/tier",          "runc",        "runc/tier",
                          "parity",    "2026-06-01T00:00:00Z", "hawk/staging"};
  const auto on_hawk = baselines::changes_since(drift, q);
  REQUIRE(on_hawk.size() == 1);
  CHECK(on_hawk[0]["run"] == "h5");
  CHECK(on_hawk[0]["deployment"] == "hawk/staging");
  q.deployment = "local/unknown";  // runs recorded without provenance: no named deployment's change
  CHECK(baselines::changes_since(drift, q).empty());
}
