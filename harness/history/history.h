// history: every run's result kept in SQLite, and timing drift found across nights.
//
// Tables: runs (one row per result document, the whole document kept as JSON), checks
// (one row per verdict of a posture run) and samples (one row per timing sample of a
// parity run: cell, workload, seconds). Drift compares the newest run's samples of each
// (cell, workload) with the pooled samples of the previous runs in a window, using the
// same equivalence test as parity (harness/parity): a "regression" there is drift. For
// posture it lists controls that passed in the previous run and fail now.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace isoharness::history {

class Database {
 public:
  // Opens (creating if needed) the database and its schema. Throws InfraError.
  explicit Database(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Stores one result document (isoharness.result/v1). Recording the same run id twice
  // replaces the earlier copy. Throws UserError for a document that is not a result.
  std::string record(const nlohmann::json& result);

  struct RunRow {
    std::string id, started, kind, verdict, git_revision, host;
  };
  // Newest first.
  std::vector<RunRow> runs(int limit = 50) const;

  // Drift of the newest run (or `run_id`) against up to `window` earlier runs of the same
  // kind. The result is a JSON document (schema isoharness.drift/v1).
  nlohmann::json drift(int window, double tolerance, const std::optional<std::string>& run_id = std::nullopt) const;

 private:
  struct Impl;
  Impl* impl_;
};

// $ISOHARNESS_HISTORY, else $XDG_DATA_HOME/isoharness/history.sqlite, else
// ~/.local/share/isoharness/history.sqlite.
std::string default_path();

// For people: the drift document as a short table.
std::string drift_to_text(const nlohmann::json& drift);

}  // namespace isoharness::history
