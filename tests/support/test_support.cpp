#include "tests/support/test_support.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace isoharness::test {

std::string source_dir() {
  return ISOHARNESS_SOURCE_DIR;
}
std::string binary_dir() {
  return ISOHARNESS_BINARY_DIR;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read test fixture " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/sbin:/usr/bin:/sbin:/bin";
  std::stringstream ss(dirs);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return ::access(("/usr/sbin/" + program).c_str(), X_OK) == 0;
}
}  // namespace

void require_system(const std::vector<std::string>& programs) {
  std::string missing;
  if (::geteuid() != 0) missing += " root privileges;";
  for (const auto& p : programs) {
    if (!on_path(p)) missing += " " + p + ";";
  }
  if (missing.empty()) return;
  const char* skip = std::getenv("ISOHARNESS_SKIP_SYSTEM");
  bool skipping = skip && std::string(skip) == "1";
  std::fprintf(stderr, "system test prerequisites missing:%s run `ci/setup` as root to install them%s\n",
               missing.c_str(), skipping ? " (skipped: ISOHARNESS_SKIP_SYSTEM=1)" : "");
  std::exit(skipping ? 77 : 1);
}

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  path = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace isoharness::test
