// filesystem: can we write to /, /tmp, the home and working directories (create a temp
// file with O_EXCL, then remove it), which mounts are read-only, and is the cgroup
// tree writable? The cgroup check uses access(W_OK) only: creating a cgroup would
// change the host kernel's state, which isoprobe never does.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

// True when a file could be created (and was removed again) in dir.
bool try_write(const std::string& dir, Evidence& ev) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    ev.add_line(dir + ": not a directory here");
    return false;
  }
  std::string path = (dir == "/" ? "" : dir) + "/.isoprobe-" + std::to_string(::getpid()) + "-write-test";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    ev.add_line(dir + ": create failed: " + errno_name(errno));
    return false;
  }
  ::close(fd);
  if (::unlink(path.c_str()) != 0)
    ev.add_line(path + ": could not remove: " + errno_name(errno));
  else
    ev.add_line(dir + ": created and removed a file");
  return true;
}

Observation observe_filesystem(Context&) {
  Observation o;
  Evidence ev;
  bool root_writable = try_write("/", ev);
  std::vector<std::string> dirs = {"/tmp", "/home/agent"};
  if (const char* home = std::getenv("HOME"); home && home[0] == '/') dirs.emplace_back(home);
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd)) dirs.emplace_back(cwd);
  nlohmann::json paths = nlohmann::json::object();
  paths["/"] = root_writable;
  for (const auto& d : dirs) {
    if (!paths.contains(d)) paths[d] = try_write(d, ev);
  }
  MountTable mounts = read_mount_table();
  std::vector<std::string> readonly;
  for (const auto& m : mounts.info.mounts) {
    if (m.read_only()) readonly.push_back(m.mount_point);
  }
  for (const auto& p : mounts.info.problems) ev.add_line("mountinfo " + p);
  bool cgroup_present = path_exists("/sys/fs/cgroup");
  bool cgroup_writable = cgroup_present && ::access("/sys/fs/cgroup", W_OK) == 0;
  std::vector<std::string> writable_controllers;
  if (cgroup_present) {
    DirList d = list_dir("/sys/fs/cgroup", 256);
    for (const auto& n : d.names) {
      std::string p = "/sys/fs/cgroup/" + n;
      struct stat st;
      if (::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(p.c_str(), W_OK) == 0)
        writable_controllers.push_back(n);
    }
  }
  if (!writable_controllers.empty()) cgroup_writable = true;
  ev.add_line(std::string("/sys/fs/cgroup: ") + (cgroup_present ? "" : "absent ") +
              (cgroup_writable ? "writable" : "not writable"));
  o.value = {{"root_writable", root_writable},
             {"paths", paths},
             {"readonly_mounts", readonly},
             {"cgroup_writable", cgroup_writable},
             {"cgroup_writable_entries", writable_controllers}};
  if (mounts.err) o.err = mounts.err;
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor filesystem_probe() {
  return {"filesystem", "writable /, /tmp, home and cwd; read-only mounts; cgroup writability",
          std::chrono::milliseconds(2000), observe_filesystem};
}

}  // namespace isoprobe
