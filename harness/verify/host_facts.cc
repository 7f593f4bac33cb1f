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
}  // namespace

HostFacts read_host_facts() {
  HostFacts f;
  f.boot_id = first_line("/proc/sys/kernel/random/boot_id");
  utsname u{};
  if (::uname(&u) == 0) {
    f.kernel_release = u.release;
    f.hostname = u.nodename;
  }
  f.pid1 = first_line("/proc/1/comm");
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
