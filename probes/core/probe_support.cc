#include "probes/core/probe_support.h"

#include <cstring>

namespace isoprobe {

std::string errno_name(int err) {
  const char* name = ::strerrorname_np(err);
  return name ? std::string(name) : "errno " + std::to_string(err);
}

MountTable read_mount_table() {
  MountTable t;
  FileRead f = read_file_bounded("/proc/self/mountinfo");
  t.err = f.err;
  t.truncated = f.truncated;
  if (f.ok()) t.info = parse_mountinfo(f.data);
  return t;
}

}  // namespace isoprobe
