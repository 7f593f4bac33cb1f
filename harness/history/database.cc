#include <chrono>
#include <cstdlib>
#include <ctime>
#include <random>
#include <thread>

#include "harness/common/error.h"
#include "harness/history/database_impl.h"
#include "harness/history/schema.h"

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

RunRow row_of(const Rows& q) {
  auto ctx = nlohmann::json::parse(q.text(6), nullptr, false);
  return {q.text(0),
          q.text(1),
          q.text(2),
          q.text(3),
          q.text(4),
          q.text(5),
          ctx.is_discarded() ? nlohmann::json::object() : ctx};
}

// The runs row first: on PostgreSQL its row lock also orders two writers of one run id,
// so the details deleted next are those of whichever stored it before.
void store(Connection& db, const RunFields& f, const nlohmann::json& result) {
  db.execute(
      "INSERT INTO runs (id, started, kind, verdict, git_revision, host, result, context) "
      "VALUES (?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(id) DO UPDATE SET started = excluded.started, "
      "kind = excluded.kind, verdict = excluded.verdict, git_revision = excluded.git_revision, "
      "host = excluded.host, result = excluded.result, context = excluded.context;",
      {f.id, f.started, f.kind, f.verdict, f.git_revision, f.host, f.document, f.context});
  for (const char* table : {"checks", "samples", "points"})
    db.execute(std::string("DELETE FROM ") + table + " WHERE run_id = ?1;", {f.id});
  insert_details(db, f.id, result);
}

}  // namespace

std::string default_path() {
  if (const char* p = std::getenv("ISOHARNESS_HISTORY"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return std::string(x) + "/isoharness/history.sqlite";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/root") + "/.local/share/isoharness/history.sqlite";
}

Database::Database(const std::string& target) : impl_(new Impl) {
  try {
    impl_->db = connect(target);
    // Two processes creating one new history at once: the loser may be told "locked" at
    // once; the schema is read afresh and the migrations are transactional, so opening is
    // tried again, at most 50 times over a few seconds, before that error is the answer.
    for (int tries = 1;; ++tries) {
      try {
        open_schema(*impl_->db);
        break;
      } catch (const StoreBusy&) {
        if (tries >= 50) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(20 + std::random_device{}() % 100));
      }
    }
  } catch (...) {
    delete impl_;
    throw;
  }
}

Database::~Database() {
  delete impl_;
}

int Database::schema_version() const {
  return impl_->db->schema_version();
}

const std::string& Database::where() const {
  return impl_->db->where();
}

std::string Database::record(const nlohmann::json& result) {
  const RunFields f = fields_of(result);
  WriteTransaction tx(*impl_->db);
  store(*impl_->db, f, result);
  tx.commit();
  return f.id;
}

std::string Database::import(const nlohmann::json& result) {
  const RunFields f = fields_of(result);
  WriteTransaction tx(*impl_->db);
  auto q = impl_->db->query("SELECT result FROM runs WHERE id = ?1;", {f.id});
  if (q->next()) {
    auto stored = nlohmann::json::parse(q->text(0), nullptr, false);
    return stored == result ? "unchanged" : "kept";
  }
  store(*impl_->db, f, result);
  tx.commit();
  return "added";
}

std::vector<RunRow> Database::runs(int limit) const {
  auto q = impl_->db->query(
      std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY started DESC, id DESC LIMIT ?1;",
      {static_cast<long long>(limit)});
  std::vector<RunRow> out;
  while (q->next()) out.push_back(row_of(*q));
  return out;
}

std::optional<RunRow> Database::run(const std::string& id) const {
  auto q = impl_->db->query(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?1;", {id});
  if (!q->next()) return std::nullopt;
  return row_of(*q);
}

nlohmann::json Database::result(const std::string& id) const {
  auto q = impl_->db->query("SELECT result FROM runs WHERE id = ?1;", {id});
  if (!q->next()) return nullptr;
  auto doc = nlohmann::json::parse(q->text(0), nullptr, false);
  return doc.is_discarded() ? nlohmann::json(nullptr) : doc;
}

void Database::annotate(const std::string& run_id, const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw UserError("history annotate: the note for run " + run_id + " is empty");
  WriteTransaction tx(*impl_->db);
  if (!impl_->db->query("SELECT 1 FROM runs WHERE id = ?1;", {run_id})->next())
    throw UserError("history annotate: no run " + run_id + " (see `isoharness history list`)");
  impl_->db->execute("INSERT INTO annotations (run_id, created, text) VALUES (?1, ?2, ?3);",
                     {run_id, utc_now(), text});
  tx.commit();
}

bool Database::keep_annotation(const Annotation& note) {
  WriteTransaction tx(*impl_->db);
  if (!impl_->db->query("SELECT 1 FROM runs WHERE id = ?1;", {note.run_id})->next()) return false;
  if (impl_->db
          ->query("SELECT 1 FROM annotations WHERE run_id = ?1 AND created = ?2 AND text = ?3;",
                  {note.run_id, note.created, note.text})
          ->next())
    return false;
  impl_->db->execute("INSERT INTO annotations (run_id, created, text) VALUES (?1, ?2, ?3);",
                     {note.run_id, note.created, note.text});
  tx.commit();
  return true;
}

std::vector<Annotation> Database::annotations(const std::string& run_id) const {
  auto q =
      run_id.empty()
          ? impl_->db->query("SELECT run_id, created, text FROM annotations ORDER BY id;")
          : impl_->db->query("SELECT run_id, created, text FROM annotations WHERE run_id = ?1 ORDER BY id;",
                             {run_id});
  std::vector<Annotation> out;
  while (q->next()) out.push_back({q->text(0), q->text(1), q->text(2)});
  return out;
}

int Database::prune(int keep) {
  if (keep < 0) throw UserError("history prune: --keep must not be negative");
  WriteTransaction tx(*impl_->db);
  const auto deleted = impl_->db->execute(
      "DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY started DESC, id DESC LIMIT ?1);",
      {static_cast<long long>(keep)});
  tx.commit();
  return static_cast<int>(deleted);
}

std::vector<SeriesPoint> Database::points(const std::string& since) const {
  auto q = impl_->db->query(
      "SELECT p.run_id, r.started, p.series, p.scenario, p.cell, p.workload, p.estimate, p.low, p.high, "
      "p.baseline_median, p.candidate_median, p.tolerance, p.verdict FROM points p JOIN runs r ON r.id = "
      "p.run_id WHERE r.started >= ?1 ORDER BY r.started, r.id, p.series;",
      {since});
  std::vector<SeriesPoint> out;
  while (q->next()) {
    SeriesPoint p;
    p.run_id = q->text(0);
    p.started = q->text(1);
    p.series = q->text(2);
    p.scenario = q->text(3);
    p.cell = q->text(4);
    p.workload = q->text(5);
    p.estimate = q->real(6);
    p.low = q->real(7);
    p.high = q->real(8);
    p.baseline_median = q->real(9);
    p.candidate_median = q->real(10);
    p.tolerance = q->real(11);
    p.verdict = q->text(12);
    out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json Database::posture_changes() const {
  std::vector<std::string> ids;
  auto last =
      impl_->db->query("SELECT id FROM runs WHERE kind = 'posture' ORDER BY started DESC, id DESC LIMIT 2;");
  while (last->next()) ids.push_back(last->text(0));
  nlohmann::json out = {{"changes", nlohmann::json::array()}};
  if (ids.size() < 2) return out;
  out["run"] = ids[0];
  out["previous_run"] = ids[1];
  auto q = impl_->db->query(
      "SELECT DISTINCT n.scenario, n.item_id, n.runtime, n.node_class, n.control FROM checks n "
      "JOIN checks p ON p.run_id = ?2 AND p.scenario = n.scenario AND p.item_id = n.item_id AND "
      "p.runtime = n.runtime AND p.node_class = n.node_class AND p.control = n.control "
      "WHERE n.run_id = ?1 AND n.status = 'fail' AND p.status = 'pass' "
      "ORDER BY n.scenario, n.item_id, n.runtime, n.node_class, n.control;",
      {ids[0], ids[1]});
  while (q->next())
    out["changes"].push_back({{"scenario", q->text(0)},
                              {"item_id", q->text(1)},
                              {"runtime", q->text(2)},
                              {"node_class", q->text(3)},
                              {"control", q->text(4)},
                              {"was", "pass"},
                              {"now", "fail"}});
  return out;
}

}  // namespace isoharness::history
