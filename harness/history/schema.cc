#include "harness/history/schema.h"

#include "harness/history/series.h"
#include "harness/history/sqlite_statement.h"

namespace isoharness::history {

namespace {

// Version 1: the tables written before the schema had a version.
constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  started TEXT NOT NULL,
  kind TEXT NOT NULL,           -- 'posture' or 'parity'
  verdict TEXT NOT NULL,
  git_revision TEXT,
  host TEXT,
  result TEXT NOT NULL          -- the whole result document
);
CREATE TABLE IF NOT EXISTS checks (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  scenario TEXT, item_id TEXT, runtime TEXT, node_class TEXT, attempt INTEGER,
  control TEXT NOT NULL, status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  cell TEXT NOT NULL, workload TEXT NOT NULL, seconds REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_by_key ON samples(cell, workload);
CREATE INDEX IF NOT EXISTS checks_by_run ON checks(run_id);
)sql";

// Version 2: each run's context block, user annotations, and one point per series per
// parity run (filled for the runs already recorded).
constexpr const char* kVersion2 = R"sql(
ALTER TABLE runs ADD COLUMN context TEXT NOT NULL DEFAULT '{}';
CREATE TABLE annotations (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  created TEXT NOT NULL,
  text TEXT NOT NULL
);
CREATE TABLE points (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  series TEXT NOT NULL, scenario TEXT NOT NULL, cell TEXT NOT NULL, workload TEXT NOT NULL,
  estimate REAL NOT NULL, low REAL NOT NULL, high REAL NOT NULL,
  baseline_median REAL NOT NULL, candidate_median REAL NOT NULL,
  tolerance REAL NOT NULL, verdict TEXT NOT NULL
);
CREATE INDEX points_by_series ON points(series);
CREATE INDEX points_by_run ON points(run_id);
CREATE INDEX annotations_by_run ON annotations(run_id);
)sql";

void insert_points(sqlite3* db, const std::string& run_id, const nlohmann::json& result) {
  Statement point(db,
                  "INSERT INTO points (run_id, series, scenario, cell, workload, estimate, low, high, "
                  "baseline_median, candidate_median, tolerance, verdict) VALUES "
                  "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12);");
  for (const auto& p : series_points(result)) {
    point.bind(1, run_id).bind(2, p.series).bind(3, p.scenario).bind(4, p.cell).bind(5, p.workload);
    point.bind(6, p.estimate).bind(7, p.low).bind(8, p.high).bind(9, p.baseline_median);
    point.bind(10, p.candidate_median).bind(11, p.tolerance).bind(12, p.verdict).run();
  }
}

// Fills the version 2 columns and tables from the documents already stored.
void backfill_version2(sqlite3* db) {
  Statement all(db, "SELECT id, result FROM runs;");
  Statement set_context(db, "UPDATE runs SET context = ?2 WHERE id = ?1;");
  while (all.step()) {
    const std::string id = all.text(0);
    auto doc = nlohmann::json::parse(all.text(1), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) continue;
    set_context.bind(1, id).bind(2, doc.value("context", nlohmann::json::object()).dump()).run();
    insert_points(db, id, doc);
  }
}

void migrate_to(sqlite3* db, int version) {
  Transaction tx(db);
  if (schema_version(db) >= version) return;  // another process got there first
  if (version == 1) exec(db, kVersion1);
  if (version == 2) {
    exec(db, kVersion2);
    backfill_version2(db);
  }
  exec(db, ("PRAGMA user_version = " + std::to_string(version) + ";").c_str());
  tx.commit();
}

}  // namespace

int schema_version(sqlite3* db) {
  Statement q(db, "PRAGMA user_version;");
  return q.step() ? static_cast<int>(q.integer(0)) : 0;
}

void open_schema(sqlite3* db, const std::string& path) {
  sqlite3_busy_timeout(db, 10000);
  exec(db, "PRAGMA journal_mode = WAL;");
  exec(db, "PRAGMA synchronous = FULL;");
  exec(db, "PRAGMA foreign_keys = ON;");
  const int found = schema_version(db);
  if (found > kSchemaVersion)
    throw UserError(path + ": history schema version " + std::to_string(found) +
                    " is newer than this isoharness (" + std::to_string(kSchemaVersion) +
                    "); use a newer isoharness");
  for (int v = found + 1; v <= kSchemaVersion; ++v) migrate_to(db, v);
}

void insert_details(sqlite3* db, const std::string& run_id, const nlohmann::json& result) {
  Statement check(
      db,
      "INSERT INTO checks (run_id, scenario, item_id, runtime, node_class, attempt, control, status) "
      "VALUES (?1,?2,?3,?4,?5,?6,?7,?8);");
  for (const auto& s : result.value("sandboxes", nlohmann::json::array())) {
    for (const auto& c : s.value("checks", nlohmann::json::array())) {
      check.bind(1, run_id)
          .bind(2, s.value("scenario", ""))
          .bind(3, s.value("item_id", ""))
          .bind(4, s.value("runtime", ""))
          .bind(5, s.value("node_class", ""))
          .bind(6, s.value("attempt", 0))
          .bind(7, c.value("control", ""))
          .bind(8, c.value("status", ""))
          .run();
    }
  }
  const auto* parity = result.contains("parity") ? &result["parity"] : nullptr;
  if (parity && parity->is_object() && parity->contains("samples") && (*parity)["samples"].is_object()) {
    Statement sample(db, "INSERT INTO samples (run_id, cell, workload, seconds) VALUES (?1,?2,?3,?4);");
    for (const auto& [cell, workloads] : (*parity)["samples"].items()) {
      if (!workloads.is_object()) continue;
      for (const auto& [workload, times] : workloads.items()) {
        if (!times.is_array()) continue;
        for (const auto& t : times)
          if (t.is_number())
            sample.bind(1, run_id).bind(2, cell).bind(3, workload).bind(4, t.get<double>()).run();
      }
    }
  }
  insert_points(db, run_id, result);
}

}  // namespace isoharness::history
