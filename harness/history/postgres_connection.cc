// The PostgreSQL side of the history's engine seam (connection.h), on libpq directly.
//
// The URI is libpq's own (postgresql://user@host:port/db?sslmode=…), and so is the rest of
// the environment: PGPASSFILE, PGPASSWORD, PGSSLMODE, PGCONNECT_TIMEOUT and the others
// apply as they do to psql. When neither the URI nor PGCONNECT_TIMEOUT says otherwise,
// connecting gives up after 10 s.
//
// Statements go out with PQexecParams, every value as text (the server infers the types;
// a double is written in its shortest exact form), ?N rewritten to $N. Writers queue on a
// transaction-scoped advisory lock, the counterpart of SQLite's BEGIN IMMEDIATE: one run
// is stored at a time, whole; a writer waits at most 2 min for it (lock_timeout). Text
// columns are COLLATE "C" so that ORDER BY and >= compare bytes, as SQLite does. The
// schema version is the one row of isoharness_schema.
//
// No message carries a password: errors name the host, port, database and user, and any
// password (the URI's, PGPASSWORD's or the password file's) is blanked out of libpq's text.
#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstdlib>

#include "harness/common/error.h"
#include "harness/history/connection.h"

namespace isoharness::history {

namespace {

// Any bigint; the same in every isoharness, so every writer of one database queues on it.
constexpr const char* kWriterLock = "SELECT pg_advisory_xact_lock(7598807782622654578);";

std::string blank(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& s : secrets)
    if (!s.empty())
      for (auto i = text.find(s); i != std::string::npos; i = text.find(s, i + 3))
        text.replace(i, s.size(), "***");
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (auto i = text.find('\n'); i != std::string::npos; i = text.find('\n', i))  // one line
    text.replace(i, i + 1 < text.size() && text[i + 1] == '\t' ? 2 : 1, "; ");
  return text;
}

// The password as written in the URI's user info (percent-encoded or not), if any.
std::string uri_password(const std::string& uri) {
  const auto start = uri.find("://");
  if (start == std::string::npos) return "";
  const auto end = uri.find_first_of("/?", start + 3);
  const std::string authority = uri.substr(start + 3, end == std::string::npos ? end : end - start - 3);
  const auto at = authority.rfind('@');
  if (at == std::string::npos) return "";
  const auto colon = authority.find(':');
  return colon < at ? authority.substr(colon + 1, at - colon - 1) : "";
}

// ?N (outside quotes) becomes $N.
std::string dollar_parameters(const std::string& sql) {
  std::string out = sql;
  char quote = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < out.size() && out[i + 1] >= '0' && out[i + 1] <= '9') {
      out[i] = '$';
    }
  }
  return out;
}

std::string as_text(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  return std::to_string(std::get<long long>(v));
}

using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

class PostgresRows final : public Rows {
 public:
  explicit PostgresRows(Result r) : r_(std::move(r)), rows_(PQntuples(r_.get())) {}
  bool next() override { return ++row_ < rows_; }
  std::string text(int col) const override { return PQgetvalue(r_.get(), row_, col); }
  double real(int col) const override { return std::strtod(PQgetvalue(r_.get(), row_, col), nullptr); }
  long long integer(int col) const override {
    return std::strtoll(PQgetvalue(r_.get(), row_, col), nullptr, 10);
  }

 private:
  Result r_;
  int rows_;
  int row_ = -1;
};

class PostgresConnection final : public Connection {
 public:
  explicit PostgresConnection(const std::string& uri);
  ~PostgresConnection() override { PQfinish(conn_); }

  Engine engine() const override { return Engine::postgres; }
  const std::string& where() const override { return where_; }

  std::unique_ptr<Rows> query(const std::string& sql, const std::vector<Value>& params) override {
    return std::make_unique<PostgresRows>(run(sql, params));
  }
  long long execute(const std::string& sql, const std::vector<Value>& params) override {
    const auto r = run(sql, params);
    return std::strtoll(PQcmdTuples(r.get()), nullptr, 10);
  }
  void script(const std::string& sql) override { check(Result(PQexec(conn_, sql.c_str()), &PQclear)); }
  void begin_write() override {
    script("BEGIN;");
    try {
      script(kWriterLock);
    } catch (...) {
      rollback();
      throw;
    }
  }
  void commit() override { script("COMMIT;"); }
  void rollback() noexcept override { PQclear(PQexec(conn_, "ROLLBACK;")); }

  Inventory inventory() override;
  int schema_version() override;
  void set_schema_version(int version) override {
    script(
        fmt::format("CREATE TABLE IF NOT EXISTS isoharness_schema (version INTEGER NOT NULL); DELETE FROM "
                    "isoharness_schema; INSERT INTO isoharness_schema (version) VALUES ({});",
                    version));
  }
  void prepare_for_writes() override {}

  std::string ddl(std::string_view portable) const override {
    return spell_ddl(portable, "TEXT COLLATE \"C\"", "DOUBLE PRECISION",
                     "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
  }
  std::string json_text(const std::string& column, const std::string& key) const override {
    return "(CAST(" + column + " AS jsonb) ->> '" + key + "')";
  }

 private:
  Result run(const std::string& sql, const std::vector<Value>& params) {
    std::vector<std::string> texts;
    texts.reserve(params.size());
    for (const auto& p : params) texts.push_back(as_text(p));
    std::vector<const char*> values;
    values.reserve(texts.size());
    for (const auto& t : texts) values.push_back(t.c_str());
    return check(Result(PQexecParams(conn_, dollar_parameters(sql).c_str(), static_cast<int>(values.size()),
                                     nullptr, values.data(), nullptr, nullptr, 0),
                        &PQclear));
  }
  Result check(Result r) {
    const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return r;
    throw InfraError("history: " + where_ + ": " + blank(PQerrorMessage(conn_), secrets_));
  }

  PGconn* conn_ = nullptr;
  std::string where_;
  std::vector<std::string> secrets_;
};

PostgresConnection::PostgresConnection(const std::string& uri) {
  secrets_.push_back(uri_password(uri));
  if (const char* pw = std::getenv("PGPASSWORD")) secrets_.push_back(pw);
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(uri.c_str(), &parse_error);
  if (!parsed) {
    std::string msg = parse_error ? parse_error : "out of memory";
    PQfreemem(parse_error);
    // A keyword/value string's parse error may quote a piece of an unquoted password.
    if (!uri.starts_with("postgres") && uri.find("password") != std::string::npos)
      msg = "(libpq's message is not shown: it may quote the password)";
    throw UserError("history: not a PostgreSQL connection string libpq accepts: " + blank(msg, secrets_));
  }
  for (const PQconninfoOption* o = parsed; o->keyword; ++o)  // the password of either form, decoded
    if (o->val && std::string_view(o->keyword) == "password") secrets_.emplace_back(o->val);
  PQconninfoFree(parsed);
  std::vector<const char*> keys = {"fallback_application_name", "client_encoding"};
  std::vector<const char*> values = {"isoharness", "UTF8"};
  if (!std::getenv("PGCONNECT_TIMEOUT")) {
    keys.push_back("connect_timeout");
    values.push_back("10");
  }
  keys.push_back("dbname");  // the URI, expanded; what it sets wins over the above
  values.push_back(uri.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  conn_ = PQconnectdbParams(keys.data(), values.data(), 1);
  if (!conn_) throw InfraError("history: cannot connect to PostgreSQL: out of memory");
  if (const char* pw = PQpass(conn_)) secrets_.push_back(pw);
  const char* host = PQhost(conn_);
  where_ = fmt::format("PostgreSQL database {} on host {} port {} as user {}", PQdb(conn_) ? PQdb(conn_) : "",
                       host && *host ? host : "(local socket)", PQport(conn_) ? PQport(conn_) : "",
                       PQuser(conn_) ? PQuser(conn_) : "");
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string msg = blank(PQerrorMessage(conn_), secrets_);
    PQfinish(conn_);
    conn_ = nullptr;
    throw InfraError("history: cannot connect to the " + where_ + ": " + msg);
  }
  // CREATE … IF NOT EXISTS chatter.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  // Bounded waits: a writer queues at most 2 min for the lock, and a session of ours that
  // hangs inside a transaction is ended by the server rather than holding it forever.
  script("SET lock_timeout = '120s'; SET idle_in_transaction_session_timeout = '120s';");
}

Inventory PostgresConnection::inventory() {
  Inventory inv{schema_version(), {}};
  auto q = query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY "
      "table_name;",
      {});
  while (q->next()) inv.tables.push_back(q->text(0));
  return inv;
}

int PostgresConnection::schema_version() {
  auto exists = query("SELECT to_regclass('isoharness_schema') IS NOT NULL;", {});
  if (!exists->next() || exists->text(0) != "t") return 0;
  auto q = query("SELECT max(version) FROM isoharness_schema;", {});
  return q->next() ? static_cast<int>(q->integer(0)) : 0;
}

}  // namespace

std::unique_ptr<Connection> connect_postgres(const std::string& uri) {
  return std::make_unique<PostgresConnection>(uri);
}

}  // namespace isoharness::history
