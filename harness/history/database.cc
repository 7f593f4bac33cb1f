#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "harness/common/error.h"
#include "harness/history/history.h"
#include "harness/history/schema.h"
#include "harness/history/sqlite_statement.h"

namespace isoharness::history {

namespace {

struct RunFields {
  std::string id, started, kind, verdict, git_revision, host, context, document;
};

RunFields fields_of(const nlohmann::json& result) {
  if (!result.is_object() || result.value("schema", "") != "isoharness.result/v1")
    throw UserError("history: not an isoharness.result/v1 document");
  const auto run = result.value("run", nlohmann::json::object());
  RunFields f;
  f.id = run.is_object() ? run.value("id", "") : "";
  if (f.id.empty()) throw UserError("history: the result has no run id");
  const auto ctx = result.value("context", nlohmann::json::object());
  if (!ctx.is_object()) throw UserError("history: run " + f.id + ": context is not an object");
  const bool parity =
      result.contains("parity") && (result["parity"].is_object() || result["parity"].is_array());
  const auto summary = result.value("summary", nlohmann::json::object());
  f.started = ctx.value("started", "");
  f.kind = parity ? "parity" : "posture";
  f.verdict = summary.is_object() ? summary.value("verdict", "unknown") : "unknown";
  f.git_revision = ctx.value("git_revision", "");
  f.host = ctx.value("host", "");
  f.context = ctx.dump();
  f.document = result.dump();
  return f;
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

constexpr const char* kRunColumns = "id, started, kind, verdict, git_revision, host, context";

RunRow row_of(const Statement& q) {
  auto ctx = nlohmann::json::parse(q.text(6), nullptr, false);
  return {q.text(0),
          q.text(1),
          q.text(2),
          q.text(3),
          q.text(4),
          q.text(5),
          ctx.is_discarded() ? nlohmann::json::object() : ctx};
}

}  // namespace

struct Database::Impl {
  sqlite3* db = nullptr;
  std::string path;

  void store(const RunFields& f, const nlohmann::json& result) {
    for (const char* table : {"checks", "samples", "points"})
      Statement(db, (std::string("DELETE FROM ") + table + " WHERE run_id = ?1;").c_str())
          .bind(1, f.id)
          .run();
    Statement(db,
              "INSERT INTO runs (id, started, kind, verdict, git_revision, host, result, context) "
              "VALUES (?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(id) DO UPDATE SET started = excluded.started, "
              "kind = excluded.kind, verdict = excluded.verdict, git_revision = excluded.git_revision, "
              "host = excluded.host, result = excluded.result, context = excluded.context;")
        .bind(1, f.id)
        .bind(2, f.started)
        .bind(3, f.kind)
        .bind(4, f.verdict)
        .bind(5, f.git_revision)
        .bind(6, f.host)
        .bind(7, f.document)
        .bind(8, f.context)
        .run();
    insert_details(db, f.id, result);
  }
};

std::string default_path() {
  if (const char* p = std::getenv("ISOHARNESS_HISTORY"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return std::string(x) + "/isoharness/history.sqlite";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/root") + "/.local/share/isoharness/history.sqlite";
}

Database::Database(const std::string& path) : impl_(new Impl) {
  impl_->path = path;
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open(path.c_str(), &impl_->db) != SQLITE_OK) {
    std::string msg = impl_->db ? sqlite3_errmsg(impl_->db) : "out of memory";
    sqlite3_close(impl_->db);
    delete impl_;
    throw InfraError("history: cannot open " + path + ": " + msg);
  }
  try {
    open_schema(impl_->db, path);
  } catch (...) {
    sqlite3_close(impl_->db);
    delete impl_;
    throw;
  }
}

Database::~Database() {
  sqlite3_close(impl_->db);
  delete impl_;
}

int Database::schema_version() const {
  return history::schema_version(impl_->db);
}

std::string Database::record(const nlohmann::json& result) {
  const RunFields f = fields_of(result);
  Transaction tx(impl_->db);
  impl_->store(f, result);
  tx.commit();
  return f.id;
}

std::string Database::import(const nlohmann::json& result) {
  const RunFields f = fields_of(result);
  Transaction tx(impl_->db);
  Statement q(impl_->db, "SELECT result FROM runs WHERE id = ?1;");
  q.bind(1, f.id);
  if (q.step()) {
    auto stored = nlohmann::json::parse(q.text(0), nullptr, false);
    return stored == result ? "unchanged" : "kept";
  }
  impl_->store(f, result);
  tx.commit();
  return "added";
}

std::vector<RunRow> Database::runs(int limit) const {
  Statement q(impl_->db, (std::string("SELECT ") + kRunColumns +
                          " FROM runs ORDER BY started DESC, rowid DESC LIMIT ?1;")
                             .c_str());
  q.bind(1, limit);
  std::vector<RunRow> out;
  while (q.step()) out.push_back(row_of(q));
  return out;
}

std::optional<RunRow> Database::run(const std::string& id) const {
  Statement q(impl_->db, (std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?1;").c_str());
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  return row_of(q);
}

nlohmann::json Database::result(const std::string& id) const {
  Statement q(impl_->db, "SELECT result FROM runs WHERE id = ?1;");
  q.bind(1, id);
  if (!q.step()) return nullptr;
  auto doc = nlohmann::json::parse(q.text(0), nullptr, false);
  return doc.is_discarded() ? nlohmann::json(nullptr) : doc;
}

void Database::annotate(const std::string& run_id, const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw UserError("history annotate: the note for run " + run_id + " is empty");
  Transaction tx(impl_->db);
  Statement q(impl_->db, "SELECT 1 FROM runs WHERE id = ?1;");
  q.bind(1, run_id);
  if (!q.step()) throw UserError("history annotate: no run " + run_id + " (see `isoharness history list`)");
  Statement(impl_->db, "INSERT INTO annotations (run_id, created, text) VALUES (?1, ?2, ?3);")
      .bind(1, run_id)
      .bind(2, utc_now())
      .bind(3, text)
      .run();
  tx.commit();
}

std::vector<Annotation> Database::annotations(const std::string& run_id) const {
  Statement q(impl_->db,
              run_id.empty()
                  ? "SELECT run_id, created, text FROM annotations ORDER BY id;"
                  : "SELECT run_id, created, text FROM annotations WHERE run_id = ?1 ORDER BY id;");
  if (!run_id.empty()) q.bind(1, run_id);
  std::vector<Annotation> out;
  while (q.step()) out.push_back({q.text(0), q.text(1), q.text(2)});
  return out;
}

int Database::prune(int keep) {
  if (keep < 0) throw UserError("history prune: --keep must not be negative");
  Transaction tx(impl_->db);
  Statement(
      impl_->db,
      "DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY started DESC, rowid DESC LIMIT ?1);")
      .bind(1, keep)
      .run();
  const int deleted = sqlite3_changes(impl_->db);
  tx.commit();
  return deleted;
}

std::vector<SeriesPoint> Database::points(const std::string& since) const {
  Statement q(
      impl_->db,
      "SELECT p.run_id, r.started, p.series, p.scenario, p.cell, p.workload, p.estimate, p.low, p.high, "
      "p.baseline_median, p.candidate_median, p.tolerance, p.verdict FROM points p JOIN runs r ON r.id = "
      "p.run_id WHERE r.started >= ?1 ORDER BY r.started, r.rowid, p.series;");
  q.bind(1, since);
  std::vector<SeriesPoint> out;
  while (q.step()) {
    SeriesPoint p;
    p.run_id = q.text(0);
    p.started = q.text(1);
    p.series = q.text(2);
    p.scenario = q.text(3);
    p.cell = q.text(4);
    p.workload = q.text(5);
    p.estimate = q.real(6);
    p.low = q.real(7);
    p.high = q.real(8);
    p.baseline_median = q.real(9);
    p.candidate_median = q.real(10);
    p.tolerance = q.real(11);
    p.verdict = q.text(12);
    out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json Database::posture_changes() const {
  std::vector<std::string> ids;
  Statement last(impl_->db,
                 "SELECT id FROM runs WHERE kind = 'posture' ORDER BY started DESC, rowid DESC LIMIT 2;");
  while (last.step()) ids.push_back(last.text(0));
  nlohmann::json out = {{"changes", nlohmann::json::array()}};
  if (ids.size() < 2) return out;
  out["run"] = ids[0];
  out["previous_run"] = ids[1];
  Statement q(impl_->db,
              "SELECT DISTINCT n.scenario, n.item_id, n.runtime, n.node_class, n.control FROM checks n "
              "JOIN checks p ON p.run_id = ?2 AND p.scenario = n.scenario AND p.item_id = n.item_id AND "
              "p.runtime = n.runtime AND p.node_class = n.node_class AND p.control = n.control "
              "WHERE n.run_id = ?1 AND n.status = 'fail' AND p.status = 'pass';");
  q.bind(1, ids[0]).bind(2, ids[1]);
  while (q.step())
    out["changes"].push_back({{"scenario", q.text(0)},
                              {"item_id", q.text(1)},
                              {"runtime", q.text(2)},
                              {"node_class", q.text(3)},
                              {"control", q.text(4)},
                              {"was", "pass"},
                              {"now", "fail"}});
  return out;
}

}  // namespace isoharness::history
