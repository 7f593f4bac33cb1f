// The history database against both real engines, one suite: every case that touches a
// database runs on a SQLite file and on a database in a PostgreSQL server of its own
// (tests/support/postgres_server.h): record, import, annotate, prune, copy, a newer schema
// and a foreign database refused, two writers at once, and drift over recorded nights
// (change points, annotations, "new since the last night"), the same on both. The upgrade
// of a file written before versioning is SQLite's alone.
#include "harness/history/history.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/history/connection.h"
#include "harness/history/copy.h"
#include "harness/history/drift.h"
#include "reports/drift_reports.h"
#include "tests/support/postgres_server.h"
#include "tests/support/test_support.h"
#include "tests/unit/history_fixture.h"

using namespace isoharness;
using nlohmann::json;

namespace {

// A fresh history on one engine: a file in a temporary directory, or a new database in
// this test process's PostgreSQL server.
struct TempDb {
  std::string engine;
  test::TempDir dir{"isoharness-history-test"};
  std::string target;
  explicit TempDb(std::string e = "sqlite") : engine(std::move(e)) {
    target = engine == "sqlite" ? dir.str() + "/h.sqlite" : test::PostgresServer::shared().new_database();
  }
  const std::string& path() const { return target; }
};

#define EACH_ENGINE()                                                           \
  const std::string engine = GENERATE(as<std::string>{}, "sqlite", "postgres"); \
  INFO("engine: " << engine);                                                   \
  TempDb t(engine)

json posture_result(const std::string& id, const std::string& started, const std::string& sysrq) {
  json checks = {{{"control", "kernel"}, {"status", "pass"}}, {{"control", "sysrq"}, {"status", sysrq}}};
  return {{"schema", "isoharness.result/v1"},
          {"context", {{"started", started}}},
          {"run", {{"id", id}}},
          {"sandboxes",
           {{{"scenario", "strict"},
             {"item_id", "t/0"},
             {"runtime", "runc"},
             {"node_class", "tier"},
             {"attempt", 1},
             {"checks", checks}}}},
          {"summary", {{"verdict", sysrq == "pass" ? "pass" : "fail"}}}};
}

// Nights 0..n-1 at `before`, from step_at on at `after` (a tiny alternating wobble so the
// values are not all tied); the runsc version changes at step_at.
void record_nights(history::Database& db, int n, int step_at, double before, double after) {
  for (int i = 0; i < n; ++i) {
    const double wobble = 1.0 + 0.004 * ((i * 7) % 5 - 2);
    const bool stepped = i >= step_at;
    db.record(
        test::parity_night(i, (stepped ? after : before) * wobble,
                           stepped ? "runsc version release-20231009.0" : "runsc version 0.0~20221219"));
  }
}

const json& series(const json& drift, const std::string& key) {
  for (const auto& s : drift["series"])
    if (s["key"] == key) return s;
  FAIL("no series " << key);
  static json none;
  return none;
}

// Two child processes, each opening the history and recording nights first..first+29
// (first = first_of(k) for child k); true when both exited 0.
bool record_from_two_processes(const std::string& target, int (*first_of)(int)) {
  pid_t kids[2];
  for (int k = 0; k < 2; ++k) {
    kids[k] = ::fork();
    if (kids[k] < 0) return false;
    if (kids[k] == 0) {
      int rc = 0;
      try {
        history::Database db(target);
        for (int i = 0; i < 30; ++i) db.record(test::parity_night(first_of(k) + i, 1.0, "runsc a"));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "history writer %d: %s\n", k, e.what());
        rc = 1;
      }
      ::_exit(rc);
    }
  }
  bool ok = true;
  for (pid_t kid : kids) {
    int status = 0;
    ok = ::waitpid(kid, &status, 0) == kid && WIFEXITED(status) && WEXITSTATUS(status) == 0 && ok;
  }
  return ok;
}

}  // namespace

TEST_CASE("history records runs, lists them newest first, and keeps notes when a run is recorded again",
          "[history]") {
  EACH_ENGINE();
  history::Database db(t.path());
  CHECK(db.schema_version() == 3);
  db.record(test::parity_night(1, 1.0, "runsc a"));
  db.record(test::parity_night(2, 1.0, "runsc a"));
  db.annotate("n02", "kernel patched by ops");
  db.record(test::parity_night(2, 1.0, "runsc a"));  // the same run again replaces it
  auto runs = db.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].id == "n02");
  CHECK(runs[0].kind == "parity");
  CHECK(runs[0].context["runsc"] == "runsc a");
  REQUIRE(db.annotations("n02").size() == 1);
  CHECK(db.annotations("n02")[0].text == "kernel patched by ops");
  CHECK(db.points().size() == 4);  // two runs, cpu_hash and mix each
  CHECK_THROWS_AS(db.record(json{{"schema", "other"}}), UserError);
  CHECK_THROWS_WITH(db.annotate("nope", "x"), Catch::Contains("no run nope"));
  CHECK_THROWS_WITH(db.annotate("n01", "  "), Catch::Contains("empty"));
}

TEST_CASE("history import is idempotent and never replaces a recorded run", "[history]") {
  EACH_ENGINE();
  history::Database db(t.path());
  CHECK(db.import(test::parity_night(1, 1.0, "runsc a")) == "added");
  CHECK(db.import(test::parity_night(1, 1.0, "runsc a")) == "unchanged");
  CHECK(db.import(test::parity_night(1, 2.0, "runsc a")) == "kept");
  REQUIRE(db.runs().size() == 1);
  CHECK(db.points().front().estimate == Approx(1.0));
}

TEST_CASE("history prune keeps the newest runs and drops the rest with their rows", "[history]") {
  EACH_ENGINE();
  history::Database db(t.path());
  for (int i = 0; i < 5; ++i) db.record(test::parity_night(i, 1.0, "runsc a"));
  db.annotate("n00", "first night");
  CHECK(db.prune(3) == 2);
  auto runs = db.runs();
  REQUIRE(runs.size() == 3);
  CHECK(runs.back().id == "n02");
  CHECK(db.annotations().empty());
  CHECK(db.points().size() == 6);
  CHECK(db.prune(3) == 0);
}

TEST_CASE("history upgrades a database written before the schema had a version", "[history]") {
  TempDb t;
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(t.path().c_str(), &raw) == SQLITE_OK);
    const std::string doc = test::parity_night(3, 1.2, "runsc old").dump();
    const std::string sql =
        "CREATE TABLE runs (id TEXT PRIMARY KEY, started TEXT NOT NULL, kind TEXT NOT NULL, verdict TEXT NOT "
        "NULL, "
        "git_revision TEXT, host TEXT, result TEXT NOT NULL);"
        "CREATE TABLE checks (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, scenario TEXT, "
        "item_id "
        "TEXT, runtime TEXT, node_class TEXT, attempt INTEGER, control TEXT NOT NULL, status TEXT NOT NULL);"
        "CREATE TABLE samples (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, cell TEXT NOT "
        "NULL, "
        "workload TEXT NOT NULL, seconds REAL NOT NULL);"
        "INSERT INTO runs VALUES ('n03', '" +
        test::night_started(3) + "', 'parity', 'pass', 'abc', 'ci-1', '" + doc + "');";
    char* err = nullptr;
    REQUIRE(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK);
    sqlite3_close(raw);
  }
  history::Database db(t.path());
  CHECK(db.schema_version() == 3);
  auto points = db.points();
  REQUIRE(points.size() == 2);  // backfilled from the stored document
  CHECK(points[0].estimate == Approx(1.2));
  CHECK(db.run("n03")->context["runsc"] == "runsc old");
  db.annotate("n03", "works after the upgrade");
  auto view = history::connect(t.path())->query("SELECT run_id, runsc, estimate FROM isoharness_points;");
  REQUIRE(view->next());
  CHECK(view->text(0) == "n03");
  CHECK(view->text(1) == "runsc old");
}

TEST_CASE("history refuses a database made by a newer isoharness", "[history]") {
  EACH_ENGINE();
  { history::Database db(t.path()); }
  {
    auto raw = history::connect(t.path());
    raw->begin_write();
    raw->set_schema_version(99);
    raw->commit();
  }
  CHECK_THROWS_AS(history::Database(t.path()), UserError);
  CHECK_THROWS_WITH(history::Database(t.path()), Catch::Contains("newer than this isoharness"));
  CHECK(history::connect(t.path())->schema_version() == 99);
}

TEST_CASE("history refuses a database that holds something else, and leaves it untouched", "[history]") {
  EACH_ENGINE();
  history::connect(t.path())->script(
      "CREATE TABLE invoices (number INTEGER); INSERT INTO invoices VALUES (7);");
  CHECK_THROWS_AS(history::Database(t.path()), UserError);
  CHECK_THROWS_WITH(history::Database(t.path()),
                    Catch::Contains("not an isoharness history") && Catch::Contains("invoices"));
  const auto after = history::connect(t.path())->inventory();
  CHECK(after.version == 0);
  CHECK(after.tables == std::vector<std::string>{"invoices"});
}

TEST_CASE("history refuses a file that is not SQLite, and leaves it untouched", "[history]") {
  test::TempDir dir("isoharness-history-test");
  const std::string path = dir.str() + "/notes.txt";
  const std::string text(2048, 'x');
  { std::ofstream(path) << text; }
  CHECK_THROWS_AS(history::Database(path), UserError);
  CHECK_THROWS_WITH(history::Database(path),
                    Catch::Contains(path) && Catch::Contains("not an isoharness history"));
  CHECK(test::read_text(path) == text);
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST_CASE("history: a PostgreSQL URI that cannot connect names the host, never the password", "[history]") {
  // Port 1 of the loopback address: nothing listens there, the refusal is immediate.
  try {
    history::Database db("postgresql://someone:pa55-secret@127.0.0.1:1/history");
    FAIL("connected to 127.0.0.1:1");
  } catch (const InfraError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("host 127.0.0.1 port 1") != std::string::npos);
    CHECK(msg.find("pa55-secret") == std::string::npos);
  }
  CHECK_THROWS_AS(history::Database("postgresql://someone:pa55-secret@127.0.0.1:1/history"), InfraError);
}

namespace {

// The message of what opening `target` throws (the test fails when nothing is thrown).
std::string open_error(const std::string& target) {
  try {
    history::Database db(target);
  } catch (const std::exception& e) {
    return e.what();
  }
  FAIL("opened " << target);
  return "";
}

}  // namespace

TEST_CASE("history: errors that quote the password show it blanked", "[history]") {
  // libpq's own message quotes the token it cannot decode: here the password itself.
  const std::string bad_escape = open_error("postgresql://someone:pa55%zz-secret@127.0.0.1:1/history");
  INFO(bad_escape);
  CHECK(bad_escape.find("invalid percent-encoded token") != std::string::npos);
  CHECK(bad_escape.find("pa55") == std::string::npos);
  // An unquoted password with a space: libpq's parse error would quote its second word.
  const std::string two_words = open_error("host=127.0.0.1 port=1 password=first second");
  INFO(two_words);
  CHECK(two_words.find("not a PostgreSQL connection string") != std::string::npos);
  CHECK(two_words.find("first") == std::string::npos);
  CHECK(two_words.find("second") == std::string::npos);
}

TEST_CASE("history: a libpq keyword/value string is PostgreSQL, never a SQLite file", "[history]") {
  CHECK(history::is_postgres_uri("host=127.0.0.1 port=1 dbname=history user=someone password=kv-secret"));
  CHECK(history::is_postgres_uri("  dbname = history"));
  CHECK_FALSE(history::is_postgres_uri("history.sqlite"));
  CHECK_FALSE(history::is_postgres_uri("/tmp/x=y.sqlite"));
  CHECK_FALSE(history::is_postgres_uri("nightly=1.sqlite"));
  test::TempDir dir("isoharness-kv");
  const std::string target = "host=127.0.0.1 port=1 dbname=history user=someone password=kv-secret";
  struct BackTo {  // the working directory comes back even when open_error fails the test
    std::filesystem::path dir;
    ~BackTo() { std::filesystem::current_path(dir); }
  } back{std::filesystem::current_path()};
  std::filesystem::current_path(dir.str());  // a SQLite file would be created here
  const std::string msg = open_error(target);
  INFO(msg);
  CHECK(msg.find("host 127.0.0.1 port 1") != std::string::npos);
  CHECK(msg.find("kv-secret") == std::string::npos);
  CHECK(std::filesystem::is_empty(dir.str()));
}

TEST_CASE("history copy moves runs and notes across engines, and a second copy adds nothing", "[history]") {
  TempDb from("sqlite");
  TempDb to("postgres");
  {
    history::Database src(from.path());
    record_nights(src, 12, 6, 1.03, 1.25);
    src.annotate("n06", "new gVisor");
  }
  const history::Database src(from.path());
  history::Database dst(to.path());
  dst.record(test::parity_night(3, 2.0, "runsc a"));  // a different document under one id: kept
  auto first = history::copy_history(src, dst);
  CHECK(first.added == 11);
  CHECK(first.kept == 1);
  CHECK(first.notes_added == 1);
  auto again = history::copy_history(src, dst);
  CHECK(again.added == 0);
  CHECK(again.unchanged == 11);
  CHECK(again.kept == 1);
  CHECK(again.notes_added == 0);
  CHECK(again.notes_present == 1);
  CHECK(dst.runs(100).size() == 12);
  CHECK(dst.annotations().size() == 1);
}

TEST_CASE("history: two processes recording at once lose nothing", "[history]") {
  EACH_ENGINE();
  { history::Database db(t.path()); }
  CHECK(record_from_two_processes(t.path(), [](int k) { return k * 100; }));
  history::Database db(t.path());
  CHECK(db.runs(1000).size() == 60);
  CHECK(db.points().size() == 120);
}

TEST_CASE("history: two processes creating a history and recording the same runs at once store each once",
          "[history]") {
  EACH_ENGINE();
  CHECK(record_from_two_processes(t.path(), [](int) { return 0; }));
  history::Database db(t.path());
  CHECK(db.schema_version() == 3);
  CHECK(db.runs(1000).size() == 30);
  CHECK(db.points().size() == 60);  // no run's points twice
  auto samples = history::connect(t.path())->query("SELECT count(*) FROM samples;");
  REQUIRE(samples->next());
  CHECK(samples->integer(0) == 30 * 3);
}

TEST_CASE("drift: a step at a runtime upgrade is found at its run and says so", "[history][drift]") {
  EACH_ENGINE();
  history::Database db(t.path());
  record_nights(db, 18, 10, 1.03, 1.25);
  db.annotate("n10", "moved the nightly to the new gVisor");
  const auto d = history::analyse_drift(db, {});
  CHECK(d["schema"] == "isoharness.drift/v2");
  CHECK(d["summary"]["runs"] == 18);
  for (const char* key : {"parity/gvisor/tier/mix", "parity/gvisor/tier/cpu_hash"}) {
    INFO(key);
    const auto& s = series(d, key);
    REQUIRE(s["changes"].size() == 1);
    const auto& c = s["changes"][0];
    CHECK(c["run"] == "n10");
    CHECK(c["index"] == 10);
    CHECK(c["p_value"].get<double>() <= 0.05);
    CHECK(c["before"]["median_ratio"].get<double>() == Approx(1.03).epsilon(0.01));
    CHECK(c["after"]["median_ratio"].get<double>() == Approx(1.25).epsilon(0.01));
    CHECK(c["shift"]["estimate"].get<double>() == Approx(1.25 / 1.03).epsilon(0.02));
    CHECK(c["shift"]["low"].get<double>() > 1.1);
    CHECK(c["direction"] == "slower");
    CHECK(c["runtime_change"] == true);
    CHECK(
        c["explanation"].get<std::string>().find("runtime change: runsc: runsc version 0.0~20221219 -> runsc "
                                                 "version release-20231009.0") != std::string::npos);
    REQUIRE(c["notes"].size() == 1);
    CHECK(c["notes"][0]["text"] == "moved the nightly to the new gVisor");
    // The step is eight nights old: not new tonight, so nothing is gated.
    CHECK(c["new"] == false);
  }
  CHECK(d["summary"]["verdict"] == "steady");
  const std::string text = history::drift_to_text(d);
  CHECK(text.find("earlier changes:") != std::string::npos);
  CHECK(text.find("parity/gvisor/tier/mix at run n10") != std::string::npos);
  CHECK(reports::render_drift_markdown(d).find("No new change point") != std::string::npos);
}

TEST_CASE("drift: a change that becomes significant tonight is new, and gated in a mix", "[history][drift]") {
  EACH_ENGINE();
  history::Database db(t.path());
  // Four nights, then four at the new level, the newest among them. Of the C(8, 4) = 70
  // orders of the eight values, two give the largest split statistic, so p ~ 2/70 = 0.029;
  // last night's seven (4 + 3) gave p ~ 2/35 = 0.057: not significant at 0.04.
  record_nights(db, 8, 4, 1.03, 1.30);
  history::DriftOptions options;
  options.change_points.significance = 0.04;
  const auto d = history::analyse_drift(db, options);
  const auto& mix = series(d, "parity/gvisor/tier/mix");
  REQUIRE(mix["changes"].size() == 1);
  CHECK(mix["changes"][0]["run"] == "n04");
  CHECK(mix["changes"][0]["new"] == true);
  CHECK(mix["changes"][0]["gated"] == true);
  const auto& work = series(d, "parity/gvisor/tier/cpu_hash");
  REQUIRE(work["changes"].size() == 1);
  CHECK(work["changes"][0]["new"] == true);
  CHECK(work["changes"][0]["gated"] == false);  // default gate: mixes only
  CHECK(d["summary"]["verdict"] == "changed");
  CHECK(d["summary"]["gated_series"] == json::array({"parity/gvisor/tier/mix"}));
  const std::string md = reports::render_drift_markdown(d);
  CHECK(md.rfind("## What changed since the last night\n\n| series", 0) == 0);
  CHECK(md.find("**gated** parity/gvisor/tier/mix") != std::string::npos);
  CHECK(history::drift_to_text(d).find("GATED parity/gvisor/tier/mix") != std::string::npos);

  options.gate.clear();  // --no-gate: reported, never gated
  CHECK(history::analyse_drift(db, options)["summary"]["verdict"] == "steady");
  options.series = {"*/cpu_hash"};
  options.gate = {"*/cpu_hash"};
  const auto only = history::analyse_drift(db, options);
  REQUIRE(only["series"].size() == 1);
  CHECK(only["summary"]["gated_series"] == json::array({"parity/gvisor/tier/cpu_hash"}));
  options.since = test::night_started(5);
  CHECK(history::analyse_drift(db, options)["summary"]["runs"] == 3);
}

namespace {

// A night that ran somewhere: `deployment` "" leaves the section without provenance (a run
// recorded before sections carried it; its context says backend local), else
// "backend/profile". The context's runtime versions are the harness host's, as a local run
// records them.
json night_on(int night, double ratio, const std::string& deployment) {
  auto doc = test::parity_night(night, ratio, "runsc version release-20231009.0");
  doc["context"]["backend"] = "local";
  if (deployment.empty()) return doc;
  const auto slash = deployment.find('/');
  doc["context"]["backend"] = deployment.substr(0, slash);
  doc["parity"]["provenance"] = {{"backend", deployment.substr(0, slash)},
                                 {"deployment", deployment.substr(slash + 1)},
                                 {"runtime", json::object()}};
  return doc;
}

}  // namespace

TEST_CASE("drift compares like with like: local, hawk and unrecorded deployments are series of their own",
          "[history][drift]") {
  EACH_ENGINE();
  history::Database db(t.path());
  // Three old nights without provenance, six on the local box (gVisor-ptrace: 8x), then
  // eight on a hawk deployment (1.2x), the newest among them; each deployment is steady.
  int night = 0;
  for (int i = 0; i < 3; ++i, ++night) db.record(night_on(night, 1.2 * (1 + 0.004 * (i % 3)), ""));
  for (int i = 0; i < 6; ++i, ++night) db.record(night_on(night, 8.0 * (1 + 0.004 * (i % 3)), "local/local"));
  for (int i = 0; i < 8; ++i, ++night)
    db.record(night_on(night, 1.2 * (1 + 0.004 * (i % 3)), "hawk/staging"));
  const auto d = history::analyse_drift(db, {});
  CHECK(d["newest_deployment"] == "hawk/staging");
  CHECK(d["summary"]["deployments"] == json::array({"hawk/staging", "local/local", "local/unknown"}));
  CHECK(d["runs"][0]["deployment"] == "local/unknown");
  CHECK(d["runs"].back()["deployment"] == "hawk/staging");
  std::map<std::string, std::size_t> mix_points;
  for (const auto& s : d["series"]) {
    INFO(s["deployment"] << " " << s["key"]);
    CHECK(s["changes"].empty());  // a switch of deployment is not a change of timing
    for (const auto& p : s["points"]) {
      const double level = s["deployment"] == "local/local" ? 8.0 : 1.2;
      CHECK(p["estimate"].get<double>() == Approx(level).epsilon(0.01));
    }
    if (s["workload"] == "mix") mix_points[s["deployment"]] = s["points"].size();
  }
  CHECK(mix_points ==
        std::map<std::string, std::size_t>{{"hawk/staging", 8}, {"local/local", 6}, {"local/unknown", 3}});
  // The newest run's deployment first, its mix first.
  CHECK(d["series"][0]["deployment"] == "hawk/staging");
  CHECK(d["series"][0]["workload"] == "mix");
  CHECK(d["summary"]["verdict"] == "steady");
  CHECK_THAT(history::drift_to_text(d), Catch::Contains("3 deployments"));
  CHECK_THAT(reports::render_drift_markdown(d), Catch::Contains("3 deployments (hawk/staging, local/local"));
  CHECK_THAT(reports::render_drift_html(d),
             Catch::Contains("<h2>hawk/staging · parity/gvisor/tier/mix</h2>") &&
                 Catch::Contains("<h2>local/unknown · parity/gvisor/tier/mix</h2>"));

  // The same key on one deployment still finds its own change, and only that one.
  db.record(night_on(night++, 1.6, "hawk/staging"));
  db.record(night_on(night++, 1.6, "hawk/staging"));
  db.record(night_on(night++, 1.61, "hawk/staging"));
  const auto after = history::analyse_drift(db, {});
  for (const auto& s : after["series"]) {
    INFO(s["deployment"] << " " << s["key"]);
    CHECK(s["changes"].size() == (s["deployment"] == "hawk/staging" ? 1U : 0U));
    for (const auto& c : s["changes"]) {
      CHECK(c["deployment"] == "hawk/staging");
      CHECK(c["before"]["runs"] == 8);
    }
  }
}

TEST_CASE("drift: steady nights give no change point", "[history][drift]") {
  EACH_ENGINE();
  history::Database db(t.path());
  record_nights(db, 20, 100, 1.03, 1.03);
  const auto d = history::analyse_drift(db, {});
  CHECK(d["summary"]["changes"] == 0);
  CHECK(d["summary"]["verdict"] == "steady");
  CHECK(history::drift_to_text(d).find("steady: 0 change point(s)") != std::string::npos);
}

TEST_CASE("drift lists posture controls that passed last time and fail now", "[history][drift]") {
  EACH_ENGINE();
  history::Database db(t.path());
  db.record(posture_result("p1", "2026-11-27T02:00:00Z", "pass"));
  CHECK(history::analyse_drift(db, {})["posture"]["changes"].empty());
  db.record(posture_result("p2", "2026-11-28T02:00:00Z", "fail"));
  auto d = history::analyse_drift(db, {});
  REQUIRE(d["posture"]["changes"].size() == 1);
  CHECK(d["posture"]["changes"][0]["control"] == "sysrq");
  CHECK(d["summary"]["verdict"] == "changed");
  db.record(posture_result("p3", "2026-11-29T02:00:00Z", "fail"));
  CHECK(history::analyse_drift(db, {})["posture"]["changes"].empty());  // it already failed the night before
}

TEST_CASE("both engines give the same drift document, run list and view rows for the same nights",
          "[history][drift]") {
  TempDb sqlite("sqlite"), postgres("postgres");
  std::vector<json> docs;
  std::vector<std::vector<std::string>> lists, views;
  for (const auto* t : {&sqlite, &postgres}) {
    history::Database db(t->path());
    record_nights(db, 14, 7, 1.03, 1.2);
    db.record(posture_result("p1", "2026-11-27T02:00:00Z", "pass"));
    db.record(posture_result("p2", "2026-11-28T02:00:00Z", "fail"));
    for (const char* id : {"z-late", "a-early"}) {  // one start time: ordered by run id on both
      auto same = test::parity_night(20, 1.1, "runsc b");
      same["run"]["id"] = id;
      same["context"]["cpus"] = 4;
      db.record(same);
    }
    db.annotate("n07", "moved to the new gVisor");
    docs.push_back(history::analyse_drift(db, {}));
    lists.emplace_back();
    for (const auto& r : db.runs(100)) lists.back().push_back(r.id);
    views.emplace_back();
    auto q = history::connect(t->path())->query(
        "SELECT run_id, started, runsc, cpus, series, estimate, low, high, verdict FROM "
        "isoharness_points ORDER BY started, run_id, series;");
    while (q->next())
      views.back().push_back(q->text(0) + "|" + q->text(1) + "|" + q->text(2) + "|" + q->text(3) + "|" +
                             q->text(4) + "|" + json(q->real(5)).dump() + "|" + json(q->real(6)).dump() +
                             "|" + json(q->real(7)).dump() + "|" + q->text(8));
  }
  CHECK(docs[0].dump(1) == docs[1].dump(1));
  CHECK(docs[0]["summary"]["changes"].get<int>() >= 2);
  CHECK(lists[0] == lists[1]);
  CHECK(lists[0][2] == "z-late");  // after the posture runs p2, p1 of November
  CHECK(lists[0][3] == "a-early");
  CHECK(views[0] == views[1]);
  REQUIRE(views[0].size() == 32);  // 16 parity runs, a workload and a mix each
  CHECK(views[0].back().find("z-late|2026-10-21T02:00:00Z|runsc b|4|parity/gvisor/tier/mix|") == 0);
}

TEST_CASE("series globs match across slashes", "[history]") {
  CHECK(history::series_matches("*/mix", "parity/gvisor/tier/mix"));
  CHECK(history::series_matches("parity/gvisor/*", "parity/gvisor/tier/cpu_hash"));
  CHECK_FALSE(history::series_matches("*/mix", "parity/gvisor/tier/cpu_hash"));
}

TEST_CASE("context changes name every field that differs, runtimes flagged", "[history]") {
  const json a = {{"runc", "1.1.5"}, {"runsc", "x"}, {"kernel", "6.1"}, {"host", "h"}};
  const json b = {{"runc", "1.1.5"}, {"runsc", "y"}, {"kernel", "6.2"}, {"host", "h"}};
  const auto d = history::context_changes(a, b);
  REQUIRE(d.size() == 2);
  CHECK(d[0]["field"] == "runsc");
  CHECK(d[0]["runtime"] == true);
  CHECK(d[1]["field"] == "kernel");
  CHECK(d[1]["runtime"] == false);
}
