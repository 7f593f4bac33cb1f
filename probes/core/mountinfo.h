// Parser for /proc/self/mountinfo (proc(5)):
//   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
// Paths come back unescaped (the kernel writes space, tab, newline and backslash as \ooo).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace isoprobe {

struct MountEntry {
  long mount_id = 0;
  long parent_id = 0;
  std::string root;         // root of the mount within its filesystem
  std::string mount_point;  // where it is mounted, relative to our root
  std::string options;      // per-mount options (rw/ro, nosuid, ...)
  std::string fstype;
  std::string source;
  std::string super_options;

  bool read_only() const;  // "ro" among the per-mount options
};

struct MountInfo {
  std::vector<MountEntry> mounts;
  std::vector<std::string> problems;  // "line N: ..." per line that did not parse
};

inline constexpr std::size_t kMaxMounts = 10000;

MountInfo parse_mountinfo(std::string_view text);

// "\040" -> " " and friends; malformed escapes are kept as written.
std::string unescape_mount_path(std::string_view s);

}  // namespace isoprobe
