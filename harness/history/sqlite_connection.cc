// The SQLite side of the history's engine seam (connection.h): one file, WAL mode with
// full sync and a busy timeout, BEGIN IMMEDIATE as the writer lock, PRAGMA user_version as
// the schema version.
#include <sqlite3.h>

#include <filesystem>

#include "harness/common/error.h"
#include "harness/history/connection.h"
#include "harness/history/sqlite_statement.h"

namespace isoharness::history {

namespace {

// Errors name the file.
template <typename F>
auto at(const std::string& path, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const UserError& e) {
    throw UserError(path + ": " + e.what());
  } catch (const StoreBusy& e) {
    throw StoreBusy(path + ": " + e.what());
  } catch (const InfraError& e) {
    throw InfraError(path + ": " + e.what());
  }
}

void bind_all(Statement& s, const std::vector<Value>& params) {
  for (std::size_t i = 0; i < params.size(); ++i)
    std::visit([&](const auto& v) { s.bind(static_cast<int>(i + 1), v); }, params[i]);
}

class SqliteRows final : public Rows {
 public:
  SqliteRows(sqlite3* db, const std::string& sql, const std::vector<Value>& params, std::string path)
      : stmt_(db, sql.c_str()), path_(std::move(path)) {
    bind_all(stmt_, params);
  }
  bool next() override {
    return at(path_, [&] { return stmt_.step(); });
  }
  std::string text(int col) const override { return stmt_.text(col); }
  double real(int col) const override { return stmt_.real(col); }
  long long integer(int col) const override { return stmt_.integer(col); }

 private:
  Statement stmt_;
  std::string path_;
};

class SqliteConnection final : public Connection {
 public:
  explicit SqliteConnection(const std::string& path) : path_(path) {
    std::error_code ec;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw InfraError("history: cannot open " + path + ": " + msg);
    }
    sqlite3_busy_timeout(db_, 10000);
  }
  // close_v2: a statement still alive (a Rows the caller keeps past its connection) does not
  // keep the connection open forever; it closes when that statement is finalised.
  ~SqliteConnection() override { sqlite3_close_v2(db_); }

  Engine engine() const override { return Engine::sqlite; }
  const std::string& where() const override { return path_; }

  std::unique_ptr<Rows> query(const std::string& sql, const std::vector<Value>& params) override {
    return at(path_, [&] { return std::make_unique<SqliteRows>(db_, sql, params, path_); });
  }
  long long execute(const std::string& sql, const std::vector<Value>& params) override {
    return at(path_, [&] {
      Statement s(db_, sql.c_str());
      bind_all(s, params);
      s.step();
      return static_cast<long long>(sqlite3_changes(db_));
    });
  }
  void script(const std::string& sql) override {
    at(path_, [&] { exec(db_, sql.c_str()); });
  }
  void begin_write() override { script("BEGIN IMMEDIATE;"); }
  void commit() override { script("COMMIT;"); }
  void rollback() noexcept override { sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr); }

  Inventory inventory() override {
    Inventory inv{schema_version(), {}};
    at(path_, [&] {
      Statement q(
          db_,
          "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
          "ORDER BY name;");
      while (q.step()) inv.tables.push_back(q.text(0));
    });
    return inv;
  }
  int schema_version() override {
    return at(path_, [&] {
      Statement q(db_, "PRAGMA user_version;");
      return q.step() ? static_cast<int>(q.integer(0)) : 0;
    });
  }
  void set_schema_version(int version) override {
    script("PRAGMA user_version = " + std::to_string(version) + ";");
  }
  void prepare_for_writes() override {
    script("PRAGMA journal_mode = WAL;");
    script("PRAGMA synchronous = FULL;");
    script("PRAGMA foreign_keys = ON;");
  }

  std::string ddl(std::string_view portable) const override {
    return spell_ddl(portable, "TEXT", "REAL", "INTEGER PRIMARY KEY");
  }
  std::string json_text(const std::string& column, const std::string& key) const override {
    return "CAST(json_extract(" + column + ", '$.\"" + key + "\"') AS TEXT)";
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace

std::unique_ptr<Connection> connect_sqlite(const std::string& path) {
  return std::make_unique<SqliteConnection>(path);
}

}  // namespace isoharness::history
