// A prepared SQLite statement that finalises itself, and exec() for plain SQL (internal to
// sqlite_connection.cc). Errors become InfraError; a file that is not SQLite, UserError.
#pragma once

#include <sqlite3.h>

#include <string>

#include "harness/common/error.h"
#include "harness/history/connection.h"

namespace isoharness::history {

// A prepared statement that finalises itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    const int rc = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
    if (rc == SQLITE_NOTADB)
      throw UserError(std::string("history: not an isoharness history: ") + sqlite3_errmsg(db));
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
      throw StoreBusy(std::string("history: cannot prepare statement: ") + sqlite3_errmsg(db));
    if (rc != SQLITE_OK)
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
  Statement& bind(int i, long long v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  // True while there is a row.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if (rc == SQLITE_NOTADB)
      throw UserError(std::string("history: not an isoharness history: ") + sqlite3_errmsg(db_));
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
      throw StoreBusy(std::string("history: ") + sqlite3_errmsg(db_));
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
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    if (rc == SQLITE_NOTADB) throw UserError("history: not an isoharness history: " + msg);
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) throw StoreBusy("history: " + msg);
    throw InfraError("history: " + msg);
  }
}

}  // namespace isoharness::history
