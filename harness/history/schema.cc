#include "harness/history/schema.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "harness/common/error.h"
#include "harness/history/series.h"

namespace isoharness::history {

namespace {

// Version 1: the tables written before the schema had a version.
constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id {text} PRIMARY KEY,
  started {text} NOT NULL,
  kind {text} NOT NULL,           -- 'posture' or 'parity'
  verdict {text} NOT NULL,
  git_revision {text},
  host {text},
  result {text} NOT NULL          -- the whole result document
);
CREATE TABLE IF NOT EXISTS checks (
  run_id {text} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  scenario {text}, item_id {text}, runtime {text}, node_class {text}, attempt INTEGER,
  control {text} NOT NULL, status {text} NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
  run_id {text} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  cell {text} NOT NULL, workload {text} NOT NULL, seconds {real} NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_by_key ON samples(cell, workload);
CREATE INDEX IF NOT EXISTS checks_by_run ON checks(run_id);
)sql";

// Version 2: each run's context block, user annotations, and one point per series per
// parity run (filled for the runs already recorded).
constexpr const char* kVersion2 = R"sql(
ALTER TABLE runs ADD COLUMN context {text} NOT NULL DEFAULT '{}';
CREATE TABLE annotations (
  id {serial},
  run_id {text} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  created {text} NOT NULL,
  text {text} NOT NULL
);
CREATE TABLE points (
  run_id {text} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  series {text} NOT NULL, scenario {text} NOT NULL, cell {text} NOT NULL, workload {text} NOT NULL,
  estimate {real} NOT NULL, low {real} NOT NULL, high {real} NOT NULL,
  baseline_median {real} NOT NULL, candidate_median {real} NOT NULL,
  tolerance {real} NOT NULL, verdict {text} NOT NULL
);
CREATE INDEX points_by_series ON points(series);
CREATE INDEX points_by_run ON points(run_id);
CREATE INDEX annotations_by_run ON annotations(run_id);
)sql";

// Version 3: the public read-only view for notebooks and dashboards (docs/CONTRACTS.md
// "History and drift"): one row per series point, with its run's start time and context.
// Its columns change only with a new schema version.
constexpr const char* kPointsViewContext[] = {"host",           "kernel",        "runc",      "runsc",
                                              "runsc_platform", "runsc_network", "cpus",      "cpu_scaling",
                                              "git_revision",   "backend",       "deployment"};

std::string points_view(const Connection& db) {
  std::string sql = "CREATE VIEW isoharness_points AS SELECT r.id AS run_id, r.started AS started, ";
  for (const char* key : kPointsViewContext) sql += db.json_text("r.context", key) + " AS " + key + ", ";
  return sql +
         "p.series AS series, p.scenario AS scenario, p.cell AS cell, p.workload AS workload, "
         "p.estimate AS estimate, p.low AS low, p.high AS high, p.verdict AS verdict "
         "FROM points p JOIN runs r ON r.id = p.run_id;";
}

void insert_points(Connection& db, const std::string& run_id, const nlohmann::json& result) {
  for (const auto& p : series_points(result))
    db.execute(
        "INSERT INTO points (run_id, series, scenario, cell, workload, estimate, low, high, "
        "baseline_median, candidate_median, tolerance, verdict) VALUES "
        "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12);",
        {run_id, p.series, p.scenario, p.cell, p.workload, p.estimate, p.low, p.high, p.baseline_median,
         p.candidate_median, p.tolerance, p.verdict});
}

// Fills the version 2 columns and tables from the documents already stored.
void backfill_version2(Connection& db) {
  std::vector<std::pair<std::string, nlohmann::json>> docs;
  for (auto all = db.query("SELECT id, result FROM runs;"); all->next();) {
    auto doc = nlohmann::json::parse(all->text(1), nullptr, false);
    if (!doc.is_discarded() && doc.is_object()) docs.emplace_back(all->text(0), std::move(doc));
  }
  for (const auto& [id, doc] : docs) {
    db.execute("UPDATE runs SET context = ?2 WHERE id = ?1;",
               {id, doc.value("context", nlohmann::json::object()).dump()});
    insert_points(db, id, doc);
  }
}

bool has(const std::vector<std::string>& tables, const char* name) {
  return std::find(tables.begin(), tables.end(), name) != tables.end();
}

// A history has its runs table; an empty database becomes one. Anything else is someone
// else's database and is left alone.
void require_history(const Connection& db, const Inventory& inv) {
  if (inv.tables.empty() || has(inv.tables, "runs")) return;
  const std::string names = fmt::format("{}", fmt::join(inv.tables, ", "));
  throw UserError(db.where() + ": not an isoharness history (it holds other tables: " + names +
                  "); name an empty database or an existing history, it was left untouched");
}

void migrate_to(Connection& db, int version) {
  WriteTransaction tx(db);
  const Inventory inv = db.inventory();
  if (inv.version >= version) return;  // another process got there first
  if (inv.version == 0) require_history(db, inv);
  if (version == 1) db.script(db.ddl(kVersion1));
  if (version == 2) {
    db.script(db.ddl(kVersion2));
    backfill_version2(db);
  }
  if (version == 3) db.script(points_view(db));
  db.set_schema_version(version);
  tx.commit();
}

}  // namespace

void open_schema(Connection& db) {
  const Inventory found = db.inventory();
  if (found.version > kSchemaVersion)
    throw UserError(db.where() + ": history schema version " + std::to_string(found.version) +
                    " is newer than this isoharness (" + std::to_string(kSchemaVersion) +
                    "); use a newer isoharness");
  if (found.version == 0) require_history(db, found);
  db.prepare_for_writes();
  for (int v = found.version + 1; v <= kSchemaVersion; ++v) migrate_to(db, v);
}

void insert_details(Connection& db, const std::string& run_id, const nlohmann::json& result) {
  for (const auto& s : result.value("sandboxes", nlohmann::json::array()))
    for (const auto& c : s.value("checks", nlohmann::json::array()))
      db.execute(
          "INSERT INTO checks (run_id, scenario, item_id, runtime, node_class, attempt, control, status) "
          "VALUES (?1,?2,?3,?4,?5,?6,?7,?8);",
          {run_id, s.value("scenario", ""), s.value("item_id", ""), s.value("runtime", ""),
           s.value("node_class", ""), static_cast<long long>(s.value("attempt", 0)), c.value("control", ""),
           c.value("status", "")});
  const auto* parity = result.contains("parity") ? &result["parity"] : nullptr;
  if (parity && parity->is_object() && parity->contains("samples") && (*parity)["samples"].is_object()) {
    for (const auto& [cell, workloads] : (*parity)["samples"].items()) {
      if (!workloads.is_object()) continue;
      for (const auto& [workload, times] : workloads.items()) {
        if (!times.is_array()) continue;
        for (const auto& t : times)
          if (t.is_number())
            db.execute("INSERT INTO samples (run_id, cell, workload, seconds) VALUES (?1,?2,?3,?4);",
                       {run_id, cell, workload, t.get<double>()});
      }
    }
  }
  insert_points(db, run_id, result);
}

}  // namespace isoharness::history
