// Helpers several posture probes share: errno names and the mount table.
#pragma once

#include <string>

#include "probes/core/file_read.h"
#include "probes/core/mountinfo.h"

namespace isoprobe {

// "EPERM" for 1; "errno N" when glibc has no name for it.
std::string errno_name(int err);

// /proc/self/mountinfo, parsed; err set when it cannot be read.
struct MountTable {
  MountInfo info;
  int err = 0;
  bool truncated = false;
};
MountTable read_mount_table();

}  // namespace isoprobe
