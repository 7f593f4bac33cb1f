#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "harness/common/error.h"
#include "harness/history/history.h"
#include "harness/parity/parity.h"

namespace isoharness::history {

namespace {

constexpr const char* kSchema = R"sql(
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

// A prepared statement that finalises itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      throw InfraError(std::string("history: cannot prepare statement: ") + sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Statement& bind(int i, int v) {
    sqlite3_bind_int(stmt_, i, v);
    return *this;
  }
  // True while there is a row.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw InfraError(std::string("history: ") + sqlite3_errmsg(db_));
  }
  void run() {
    step();
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int col) const {
    auto* t = sqlite3_column_text(stmt_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw InfraError("history: " + msg);
  }
}

}  // namespace

struct Database::Impl {
  sqlite3* db = nullptr;
};

std::string default_path() {
  if (const char* p = std::getenv("ISOHARNESS_HISTORY"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return std::string(x) + "/isoharness/history.sqlite";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/root") + "/.local/share/isoharness/history.sqlite";
}

Database::Database(const std::string& path) : impl_(new Impl) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open(path.c_str(), &impl_->db) != SQLITE_OK) {
    std::string msg = impl_->db ? sqlite3_errmsg(impl_->db) : "out of memory";
    sqlite3_close(impl_->db);
    delete impl_;
    throw InfraError("history: cannot open " + path + ": " + msg);
  }
  sqlite3_busy_timeout(impl_->db, 5000);
  try {
    exec(impl_->db, "PRAGMA foreign_keys = ON;");
    exec(impl_->db, kSchema);
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

std::string Database::record(const nlohmann::json& result) {
  if (!result.is_object() || result.value("schema", "") != "isoharness.result/v1")
    throw UserError("history: not an isoharness.result/v1 document");
  const auto& run = result.value("run", nlohmann::json::object());
  const std::string id = run.value("id", "");
  if (id.empty()) throw UserError("history: the result has no run id");
  const auto& ctx = result.value("context", nlohmann::json::object());
  const bool parity = result.contains("parity") && result["parity"].is_object();
  const std::string verdict = result.value("summary", nlohmann::json::object()).value("verdict", "unknown");

  exec(impl_->db, "BEGIN IMMEDIATE;");
  try {
    Statement(impl_->db, "DELETE FROM runs WHERE id = ?1;").bind(1, id).run();
    Statement(impl_->db,
              "INSERT INTO runs (id, started, kind, verdict, git_revision, host, result) VALUES (?1,?2,?3,?4,?5,?6,?7);")
        .bind(1, id)
        .bind(2, ctx.value("started", ""))
        .bind(3, std::string(parity ? "parity" : "posture"))
        .bind(4, verdict)
        .bind(5, ctx.value("git_revision", ""))
        .bind(6, ctx.value("host", ""))
        .bind(7, result.dump())
        .run();
    Statement check(impl_->db,
                    "INSERT INTO checks (run_id, scenario, item_id, runtime, node_class, attempt, control, status) "
                    "VALUES (?1,?2,?3,?4,?5,?6,?7,?8);");
    for (const auto& s : result.value("sandboxes", nlohmann::json::array())) {
      for (const auto& c : s.value("checks", nlohmann::json::array())) {
        check.bind(1, id)
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
    if (parity && result["parity"].contains("samples") && result["parity"]["samples"].is_object()) {
      Statement sample(impl_->db, "INSERT INTO samples (run_id, cell, workload, seconds) VALUES (?1,?2,?3,?4);");
      for (const auto& [cell, workloads] : result["parity"]["samples"].items()) {
        if (!workloads.is_object()) continue;
        for (const auto& [workload, times] : workloads.items()) {
          if (!times.is_array()) continue;
          for (const auto& t : times)
            if (t.is_number()) sample.bind(1, id).bind(2, cell).bind(3, workload).bind(4, t.get<double>()).run();
        }
      }
    }
    exec(impl_->db, "COMMIT;");
  } catch (...) {
    exec(impl_->db, "ROLLBACK;");
    throw;
  }
  return id;
}

std::vector<Database::RunRow> Database::runs(int limit) const {
  Statement q(impl_->db,
              "SELECT id, started, kind, verdict, git_revision, host FROM runs ORDER BY started DESC, rowid DESC LIMIT ?1;");
  q.bind(1, limit);
  std::vector<RunRow> out;
  while (q.step()) out.push_back({q.text(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5)});
  return out;
}

nlohmann::json Database::drift(int window, double tolerance, const std::optional<std::string>& run_id) const {
  // The run to judge, and the earlier runs of its kind.
  std::string current = run_id.value_or("");
  std::string kind, started;
  {
    Statement q(impl_->db, current.empty()
                               ? "SELECT id, kind, started FROM runs ORDER BY started DESC, rowid DESC LIMIT 1;"
                               : "SELECT id, kind, started FROM runs WHERE id = ?1;");
    if (!current.empty()) q.bind(1, current);
    if (!q.step()) throw UserError(current.empty() ? "history: no runs recorded yet" : "history: no run " + current);
    current = q.text(0);
    kind = q.text(1);
    started = q.text(2);
  }
  std::vector<std::string> previous;
  {
    Statement q(impl_->db,
                "SELECT id FROM runs WHERE kind = ?1 AND id != ?2 AND started <= ?3 ORDER BY started DESC, rowid DESC "
                "LIMIT ?4;");
    q.bind(1, kind).bind(2, current).bind(3, started).bind(4, window);
    while (q.step()) previous.push_back(q.text(0));
  }
  nlohmann::json out = {{"schema", "isoharness.drift/v1"},
                        {"run", current},
                        {"kind", kind},
                        {"compared_with", previous},
                        {"tolerance", tolerance},
                        {"timings", nlohmann::json::array()},
                        {"posture", nlohmann::json::array()}};
  if (previous.empty()) {
    out["note"] = "no earlier run of this kind to compare with";
    return out;
  }

  // Timings: newest samples against the pooled earlier ones.
  using Key = std::pair<std::string, std::string>;
  std::map<Key, std::vector<double>> now, before;
  {
    Statement q(impl_->db, "SELECT cell, workload, seconds FROM samples WHERE run_id = ?1;");
    q.bind(1, current);
    while (q.step()) now[{q.text(0), q.text(1)}].push_back(q.real(2));
  }
  for (const auto& id : previous) {
    Statement q(impl_->db, "SELECT cell, workload, seconds FROM samples WHERE run_id = ?1;");
    q.bind(1, id);
    while (q.step()) before[{q.text(0), q.text(1)}].push_back(q.real(2));
  }
  for (const auto& [key, samples] : now) {
    auto it = before.find(key);
    if (it == before.end()) continue;
    auto cmp = parity::compare(key.second, it->second, samples, tolerance);
    auto j = parity::to_json(cmp);
    j["cell"] = key.first;
    j["drift"] = cmp.verdict == parity::kRegression;
    out["timings"].push_back(j);
  }

  // Posture: controls that passed in the previous run and fail now.
  {
    Statement q(impl_->db,
                "SELECT DISTINCT n.scenario, n.item_id, n.runtime, n.node_class, n.control FROM checks n "
                "JOIN checks p ON p.run_id = ?2 AND p.scenario = n.scenario AND p.item_id = n.item_id AND "
                "p.runtime = n.runtime AND p.node_class = n.node_class AND p.control = n.control "
                "WHERE n.run_id = ?1 AND n.status = 'fail' AND p.status = 'pass';");
    q.bind(1, current).bind(2, previous.front());
    while (q.step())
      out["posture"].push_back({{"scenario", q.text(0)}, {"item_id", q.text(1)}, {"runtime", q.text(2)},
                                {"node_class", q.text(3)}, {"control", q.text(4)}, {"was", "pass"}, {"now", "fail"}});
  }
  return out;
}

std::string drift_to_text(const nlohmann::json& drift) {
  std::string out = "drift of run " + drift.value("run", "") + " (" + drift.value("kind", "") + ") against " +
                    std::to_string(drift.value("compared_with", nlohmann::json::array()).size()) + " earlier run(s)\n";
  if (drift.contains("note")) return out + drift["note"].get<std::string>() + "\n";
  int drifted = 0;
  char line[256];
  for (const auto& t : drift.value("timings", nlohmann::json::array())) {
    const auto& r = t.value("ratio", nlohmann::json::object());
    std::snprintf(line, sizeof line, "  %-18s %-22s %6.3f [%6.3f, %6.3f]  %s\n", t.value("cell", "").c_str(),
                  t.value("workload", "").c_str(), r.value("estimate", 0.0), r.value("low", 0.0), r.value("high", 0.0),
                  t.value("drift", false) ? "DRIFT" : t.value("verdict", "").c_str());
    out += line;
    if (t.value("drift", false)) ++drifted;
  }
  for (const auto& p : drift.value("posture", nlohmann::json::array())) {
    out += "  posture: " + p.value("scenario", "") + " " + p.value("item_id", "") + " " + p.value("runtime", "") +
           "/" + p.value("node_class", "") + " " + p.value("control", "") + " passed before, fails now\n";
    ++drifted;
  }
  out += drifted ? std::to_string(drifted) + " drifted\n" : "no drift\n";
  return out;
}

}  // namespace isoharness::history
