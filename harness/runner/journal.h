// The result document, written as the run goes: every finished sandbox is appended to a
// journal (one JSON object per line, flushed and fsync'd) before the next step, so a crash
// loses nothing already measured; finalise() writes result.json atomically.
//
// A journal that cannot be written where it started (the disk under --out full, or gone)
// is not given up: the lines written so far and every later one move to a file under
// kKeptJournalDir, the move is announced on stderr at once with both paths, and
// write_error() makes the run end in an infrastructure failure that says where the
// journal now is. Nothing measured is dropped silently.
#pragma once

#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace isoharness::runner {

// Where journals go when --out can no longer be written. Not a run directory of the local
// backend's state root (the name is not a run id), so `local cleanup` leaves it alone.
inline constexpr const char* kKeptJournalDir = "/run/isoharness/kept-journals";

class Journal {
 public:
  // Creates out_dir if needed and opens out_dir/journal.jsonl for writing. Throws
  // InfraError when it cannot (nothing has run yet). kept_dir replaces kKeptJournalDir.
  Journal(std::string out_dir, const nlohmann::json& header, std::string kept_dir = kKeptJournalDir);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Thread-safe. Appends {"kind": kind, ...record} and syncs it to disk; on a write error,
  // moves the journal to the kept directory (see above) and never throws.
  void append(const std::string& kind, const nlohmann::json& record);

  // Writes out_dir/result.json (via a temp file and rename) and returns its path. Throws
  // InfraError naming the file and where the journal is when it cannot.
  std::string finalise(const nlohmann::json& result);

  const std::string& out_dir() const { return out_dir_; }
  // Where the journal is now: out_dir/journal.jsonl, or the kept copy after a write error.
  std::string path() const;
  // The first write error ("" when none), with where the journal was kept.
  std::string write_error() const;

 private:
  bool write_line(const std::string& text);
  void keep_elsewhere(const std::string& text, int err);

  std::string out_dir_;
  std::string kept_dir_;
  std::string kept_name_;
  std::string path_;
  std::FILE* file_ = nullptr;
  long good_bytes_ = 0;  // bytes of whole lines known to be on disk in path_
  std::string write_error_;
  mutable std::mutex mutex_;
};

// Writes out_dir/result.json via a temp file and rename; returns its path. Throws
// InfraError naming the file, with `note` appended (where the measurements still are).
std::string write_result(const std::string& out_dir, const nlohmann::json& result, const std::string& note);

// Rebuilds a result document from a journal a crashed run left (header + sandboxes), so
// what was measured can still be reported.
nlohmann::json result_from_journal(const std::string& journal_path);

}  // namespace isoharness::runner
