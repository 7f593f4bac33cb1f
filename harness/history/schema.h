// The history database's schema and its migrations (internal to harness/history).
//
// PRAGMA user_version holds the schema version. Version 0 is either a new file or a
// database written before versioning (runs, checks, samples); each migration runs in one
// IMMEDIATE transaction that re-reads the version first, so two processes opening the
// same old file at once migrate it once. A file newer than this build is refused.
#pragma once

#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <string>

namespace isoharness::history {

inline constexpr int kSchemaVersion = 2;

// WAL, full sync, foreign keys, busy timeout; then every migration the file lacks.
void open_schema(sqlite3* db, const std::string& path);

int schema_version(sqlite3* db);

// The rows a result document adds besides its `runs` row: checks, samples and series
// points. The caller holds the transaction.
void insert_details(sqlite3* db, const std::string& run_id, const nlohmann::json& result);

}  // namespace isoharness::history
