// A prepared SQLite statement that finalises itself, and exec() for plain SQL (internal to
// harness/history). Errors become InfraError naming the database operation.
#pragma once

#include <sqlite3.h>

#include <string>

#include "harness/common/error.h"

namespace isoharness::history {

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
    reset();
  }
  std::string text(int col) const {
    auto* t = sqlite3_column_text(stmt_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  long long integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  // Ready to run again with new bindings.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

inline void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw InfraError("history: " + msg);
  }
}

}  // namespace isoharness::history

namespace isoharness::history {

// BEGIN IMMEDIATE (takes the write lock at once, so two writers queue on the busy timeout
// instead of failing half-way); ROLLBACK unless commit() was called.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) { exec(db_, "BEGIN IMMEDIATE;"); }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    exec(db_, "COMMIT;");
    done_ = true;
  }

 private:
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace isoharness::history
