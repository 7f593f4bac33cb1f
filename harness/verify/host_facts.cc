// Reading this machine's own facts, for comparison with what sandboxes report.
#include <dirent.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "harness/verify/verify.h"

namespace isoharness::verify {
namespace {
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// PID 1 as isoprobe's processes probe reports it (its command line, NULs as spaces,
// trimmed; "[comm]" when empty), so that a sandbox in the host's PID namespace compares
// equal. Found by `isoharness selftest` (host_pid_namespace): comm never equals a cmdline.
std::string pid1_text() {
  std::ifstream in("/proc/1/cmdline", std::ios::binary);
  std::string text;
  char c;
  while (text.size() < 65536 && in.get(c)) text.push_back(c == '\0' ? ' ' : c);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  text = text.substr(start);
  return text.empty() ? "[" + first_line("/proc/1/comm") + "]" : text;
}
}  // namespace

HostFacts read_host_facts() {
  HostFacts f;
  f.boot_id = first_line("/proc/sys/kernel/random/boot_id");
  utsname u{};
  if (::uname(&u) == 0) {
    f.kernel_release = u.release;
    f.hostname = u.nodename;
  }
  f.pid1 = pid1_text();
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      if (std::isdigit(static_cast<unsigned char>(e->d_name[0]))) ++f.process_count;
    }
    ::closedir(d);
  }
  if (DIR* d = ::opendir("/sys/class/net")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') f.interfaces.emplace_back(e->d_name);
    }
    ::closedir(d);
  }
  return f;
}

}  // namespace isoharness::verify
