// history: every run's result kept in a database (a SQLite file, or PostgreSQL for a team
// that shares one history), and timing changes found across nights.
//
// Tables (schema.h has the versions and migrations): runs (one row per result document,
// the whole document and its context block kept as JSON), checks (one row per verdict of
// a posture run), samples (one row per timing sample of a parity run), points (one row
// per series per parity run: the ratio and interval of a workload or a cell's mix) and
// annotations (notes people attach to a run).
//
// Both engines hold the same schema (schema.h) behind one seam (connection.h). Every run
// is stored in one write transaction that holds the database's writer lock (SQLite: WAL,
// full sync, BEGIN IMMEDIATE; PostgreSQL: an advisory lock): two writers queue rather than
// fail, and a crash loses nothing that was committed. The view isoharness_points is the
// public SQL surface (docs/CONTRACTS.md).
//
// Drift (drift.h) finds change points in every series with E-divisive means
// (change_points.h) and annotates each with what changed in the context at that run.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/history/series.h"

namespace isoharness::history {

struct Annotation {
  std::string run_id, created, text;
};

// One recorded run; context is its result's context block.
struct RunRow {
  std::string id, started, kind, verdict, git_revision, host;
  nlohmann::json context;
};

class Database {
 public:
  // Opens the database and brings its schema up to date: `target` is a SQLite file
  // (created when missing) or a postgresql:// URI (libpq's syntax and environment).
  // Throws InfraError when the engine fails or cannot be reached (naming the file or the
  // host, never a password), UserError for a database made by a newer isoharness or one
  // that is not a history (left untouched).
  explicit Database(const std::string& target);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  int schema_version() const;
  // The file path, or the PostgreSQL database, host, port and user: for messages.
  const std::string& where() const;

  // Stores one result document (isoharness.result/v1). Recording the same run id twice
  // replaces the earlier copy (its annotations stay). Throws UserError for a document that
  // is not a result.
  std::string record(const nlohmann::json& result);

  // Like record, but a run id already present is left as it is: importing the same files
  // again changes nothing. Returns "added", "unchanged" (same document) or "kept" (a
  // different document with that id is already recorded and was not replaced).
  std::string import(const nlohmann::json& result);

  // Newest first (by start time, then run id).
  std::vector<RunRow> runs(int limit = 50) const;
  std::optional<RunRow> run(const std::string& id) const;
  // The stored result document of a run (null when unknown).
  nlohmann::json result(const std::string& id) const;

  // Attaches a note to a run. Throws UserError for an unknown run or an empty text.
  void annotate(const std::string& run_id, const std::string& text);
  // Attaches a note written in another history, its time kept (history copy). Returns
  // false, adding nothing, when its run is not here or the same note already is.
  bool keep_annotation(const Annotation& note);
  // Oldest first; of one run, or of every run when run_id is empty.
  std::vector<Annotation> annotations(const std::string& run_id = "") const;

  // Deletes every run but the newest `keep` (with their checks, samples, points and
  // annotations). Returns how many were deleted.
  int prune(int keep);

  // Every series point of the parity runs started at or after `since` (ISO 8601 text;
  // empty = all), ordered by run start time, run id, then series.
  std::vector<SeriesPoint> points(const std::string& since = "") const;

  // Controls that passed in the posture run before the newest and fail in the newest:
  // [{scenario, item_id, runtime, node_class, control, was, now}], plus the two run ids.
  nlohmann::json posture_changes() const;

 private:
  struct Impl;
  Impl* impl_;
};

// True for a postgresql:// or postgres:// URI or a libpq keyword/value string whose first
// keyword libpq knows ("host=… dbname=… password=…"); anything else names a SQLite file.
bool is_postgres_uri(std::string_view target);

// $ISOHARNESS_HISTORY, else $XDG_DATA_HOME/isoharness/history.sqlite, else
// ~/.local/share/isoharness/history.sqlite.
std::string default_path();

}  // namespace isoharness::history
