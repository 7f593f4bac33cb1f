#include "harness/runner/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/common/log.h"
#include "harness/common/text.h"

namespace isoharness::runner {
namespace {

// The kept journal's file name: the run id from the header, else one made from the pid.
std::string kept_name_of(const nlohmann::json& header) {
  const auto id = nlohmann::json::json_pointer("/run/id");
  if (header.contains(id) && header[id].is_string() && !header[id].get<std::string>().empty())
    return header[id].get<std::string>();
  return "journal-" + std::to_string(::getpid());
}

// Copies the first `bytes` bytes of `from` to `to`; false on any short read or write.
bool copy_prefix(const std::string& from, std::FILE* to, long bytes) {
  std::FILE* in = std::fopen(from.c_str(), "r");
  if (!in) return bytes == 0;
  char buf[65536];
  while (bytes > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<long>(bytes, sizeof buf));
    const std::size_t got = std::fread(buf, 1, want, in);
    if (got != want || std::fwrite(buf, 1, got, to) != got) break;
    bytes -= static_cast<long>(got);
  }
  std::fclose(in);
  return bytes == 0;
}

}  // namespace

Journal::Journal(std::string out_dir, const nlohmann::json& header, std::string kept_dir)
    : out_dir_(std::move(out_dir)), kept_dir_(std::move(kept_dir)), kept_name_(kept_name_of(header)) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir_, ec);
  if (ec) throw InfraError("cannot create output directory " + out_dir_ + ": " + ec.message());
  log::write_to_directory(out_dir_);
  path_ = out_dir_ + "/journal.jsonl";
  file_ = std::fopen(path_.c_str(), "w");
  if (!file_) throw InfraError("cannot write " + path_ + ": " + std::strerror(errno));
  append("header", header);
}

Journal::~Journal() {
  if (file_) std::fclose(file_);
}

bool Journal::write_line(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) return false;
  if (std::fflush(file_) != 0) return false;
  if (::fsync(::fileno(file_)) != 0 && errno != EINVAL) return false;
  good_bytes_ += static_cast<long>(text.size());
  return true;
}

// Called with the lock held after a failed write: the whole lines written so far and
// `text` go to the kept file, which takes every later line.
void Journal::keep_elsewhere(const std::string& text, int err) {
  const std::string failed = path_;
  const std::string kept = kept_dir_ + "/" + kept_name_ + ".jsonl";
  std::string why = "cannot write the journal " + failed + ": " + std::strerror(err);
  std::error_code ec;
  std::filesystem::create_directories(kept_dir_, ec);
  ::chmod(kept_dir_.c_str(), 0700);
  std::FILE* next = ec ? nullptr : std::fopen(kept.c_str(), "w");
  std::fclose(file_);
  file_ = next;
  path_ = kept;
  const long before = good_bytes_;
  good_bytes_ = 0;
  bool kept_ok = false;
  if (next && copy_prefix(failed, next, before)) {
    good_bytes_ = before;
    kept_ok = write_line(text);
  }
  if (kept_ok) {
    why += "; every record so far and every later one is kept in " + kept;
  } else {
    why += "; keeping it in " + kept + " failed too (" + std::strerror(errno) +
           "): records from here on are lost";
    if (file_) std::fclose(file_);
    file_ = nullptr;
  }
  if (write_error_.empty()) write_error_ = why;
  std::fprintf(stderr, "isoharness: error: %s\n", why.c_str());
}

void Journal::append(const std::string& kind, const nlohmann::json& record) {
  nlohmann::json line = record;
  line["kind"] = kind;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  if (!file_) return;
  errno = 0;
  if (!write_line(text)) keep_elsewhere(text, errno ? errno : EIO);
}

std::string Journal::path() const {
  std::lock_guard lock(mutex_);
  return path_;
}

std::string Journal::write_error() const {
  std::lock_guard lock(mutex_);
  return write_error_;
}

std::string Journal::finalise(const nlohmann::json& result) {
  return write_result(out_dir_, result, "; every finished sandbox is in the journal " + this->path());
}

std::string write_result(const std::string& out_dir, const nlohmann::json& result, const std::string& note) {
  std::string path = out_dir + "/result.json";
  const auto written = common::write_file_atomically(
      path, result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (!written) throw InfraError("writing the result: " + written.error().message + note);
  return path;
}

nlohmann::json result_from_journal(const std::string& journal_path) {
  std::ifstream in(journal_path);
  if (!in) throw UserError("cannot read journal " + journal_path);
  nlohmann::json result = {{"sandboxes", nlohmann::json::array()}};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    auto rec = nlohmann::json::parse(line, nullptr, false);
    if (rec.is_discarded() || !rec.is_object()) {
      // A torn last line is what a crash leaves; anything else is reported.
      if (in.peek() == EOF) break;
      throw UserError(Diagnostic{journal_path, n, 0, "", "not a journal record"}.to_string());
    }
    std::string kind = rec.value("kind", "");
    rec.erase("kind");
    if (kind == "header") {
      for (auto& [k, v] : rec.items()) result[k] = v;
    } else if (kind == "sandbox") {
      result["sandboxes"].push_back(rec);
    } else if (kind == "skipped") {  // an attempt the run did not reach (not_run), after the header
      if (!result.contains("skipped") || !result["skipped"].is_array())
        result["skipped"] = nlohmann::json::array();
      result["skipped"].push_back(rec);
    }
  }
  return result;
}

}  // namespace isoharness::runner
