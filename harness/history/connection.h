// The one seam between the history and its database engine (internal to harness/history).
//
// Everything above this header writes portable SQL: parameters spelled ?1, ?2, …, plain
// column types, INSERT … ON CONFLICT, ORDER BY on text compared byte by byte. What differs
// between SQLite and PostgreSQL lives behind it, in sqlite_connection.cc and
// postgres_connection.cc:
//   - how to connect, and what a failure to connect says (never a password);
//   - how a write transaction takes the database's one writer lock (SQLite BEGIN
//     IMMEDIATE; PostgreSQL a transaction-scoped advisory lock), so writers queue alike;
//   - where the schema version is kept (SQLite PRAGMA user_version; PostgreSQL the
//     one-row table isoharness_schema);
//   - how a column type in a CREATE statement is spelled ({text}, {real}, {serial}) and how
//     a field of a JSON text column is read (json_text).
// A new read is one call: `conn.query("SELECT … WHERE x = ?1", {value})`, then next() and
// text()/real()/integer() per column.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "harness/common/error.h"
#include "harness/history/history.h"

namespace isoharness::history {

// The store was locked by another writer past its own wait (SQLite can answer "database is
// locked" at once, without its busy handler, while two connections set up one new file).
// Opening a history tries again a bounded number of times on it (database.cc).
struct StoreBusy : InfraError {
  using InfraError::InfraError;
};

enum class Engine { sqlite, postgres };

using Value = std::variant<std::string, double, long long>;

// The rows of one query, read in order; columns count from 0. A NULL reads as "" or 0.
class Rows {
 public:
  virtual ~Rows() = default;
  virtual bool next() = 0;  // true while there is a row
  virtual std::string text(int col) const = 0;
  virtual double real(int col) const = 0;
  virtual long long integer(int col) const = 0;
};

// What is in the database before isoharness touches it.
struct Inventory {
  int version = 0;                  // the schema version recorded, 0 when none
  std::vector<std::string> tables;  // tables and views, engine's own catalogue left out
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Engine engine() const = 0;
  // For messages: the file path, or "PostgreSQL database D on host H port P".
  virtual const std::string& where() const = 0;

  // One statement with ?N parameters. Errors throw InfraError naming where().
  virtual std::unique_ptr<Rows> query(const std::string& sql, const std::vector<Value>& params = {}) = 0;
  // One statement; returns how many rows it changed.
  virtual long long execute(const std::string& sql, const std::vector<Value>& params = {}) = 0;
  // Several statements without parameters (a migration's DDL), already spelled by ddl().
  virtual void script(const std::string& sql) = 0;

  // A write transaction holding the database's one writer lock (waits for it).
  virtual void begin_write() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;

  // The schema version and the tables, read without changing anything.
  virtual Inventory inventory() = 0;
  virtual int schema_version() = 0;
  // Inside a write transaction.
  virtual void set_schema_version(int version) = 0;
  // Engine settings applied once the database is known to be a history (SQLite: WAL, full
  // sync, foreign keys).
  virtual void prepare_for_writes() = 0;

  // DDL spelled for this engine: {text} a text column compared byte by byte, {real} a
  // double, {serial} an integer primary key the database numbers.
  virtual std::string ddl(std::string_view portable) const = 0;
  // SQL for the JSON field `key` of the text column `column`, as text (NULL when absent).
  virtual std::string json_text(const std::string& column, const std::string& key) const = 0;
};

// Opens a SQLite file (created when missing, with its directory) or connects to the
// PostgreSQL database of a URI (libpq's syntax and PG* environment). Throws InfraError
// when it cannot, UserError for a malformed URI.
std::unique_ptr<Connection> connect(const std::string& target);
std::unique_ptr<Connection> connect_sqlite(const std::string& path);
std::unique_ptr<Connection> connect_postgres(const std::string& uri);

// `portable` with {text}, {real} and {serial} replaced by an engine's spelling.
std::string spell_ddl(std::string_view portable, std::string_view text, std::string_view real,
                      std::string_view serial);

// begin_write() now; rollback() unless commit() was called.
class WriteTransaction {
 public:
  explicit WriteTransaction(Connection& c) : c_(c) { c_.begin_write(); }
  ~WriteTransaction() {
    if (!done_) c_.rollback();
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit() {
    c_.commit();
    done_ = true;
  }

 private:
  Connection& c_;
  bool done_ = false;
};

}  // namespace isoharness::history
