#include "harness/runner/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/common/log.h"

namespace isoharness::runner {

Journal::Journal(std::string out_dir, nlohmann::json header) : out_dir_(std::move(out_dir)) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir_, ec);
  if (ec) throw InfraError("cannot create output directory " + out_dir_ + ": " + ec.message());
  log::write_to_directory(out_dir_);
  std::string path = out_dir_ + "/journal.jsonl";
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw InfraError("cannot write " + path + ": " + std::strerror(errno));
  append("header", header);
}

Journal::~Journal() {
  if (file_) std::fclose(file_);
}

void Journal::append(const std::string& kind, const nlohmann::json& record) {
  nlohmann::json line = record;
  line["kind"] = kind;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  if (!file_) return;
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
  ::fsync(::fileno(file_));
}

std::string Journal::finalise(const nlohmann::json& result) {
  std::string path = out_dir_ + "/result.json";
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!out) throw InfraError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw InfraError("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
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
    }
  }
  return result;
}

}  // namespace isoharness::runner
