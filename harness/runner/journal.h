// The result document, written as the run goes: every finished sandbox is appended to a
// journal (one JSON object per line, flushed and fsync'd) before the next step, so a crash
// loses nothing already measured; finalise() writes result.json atomically.
#pragma once

#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace isoharness::runner {

class Journal {
 public:
  // Creates out_dir if needed and opens out_dir/journal.jsonl for appending. Throws
  // InfraError when it cannot.
  Journal(std::string out_dir, nlohmann::json header);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Thread-safe. Appends {"kind": kind, ...record} and syncs it to disk.
  void append(const std::string& kind, const nlohmann::json& record);

  // Writes out_dir/result.json (via a temp file and rename) and returns its path.
  std::string finalise(const nlohmann::json& result);

  const std::string& out_dir() const { return out_dir_; }

 private:
  std::string out_dir_;
  std::FILE* file_ = nullptr;
  std::mutex mutex_;
};

// Rebuilds a result document from a journal a crashed run left (header + sandboxes), so
// what was measured can still be reported.
nlohmann::json result_from_journal(const std::string& journal_path);

}  // namespace isoharness::runner
