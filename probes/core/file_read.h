// Bounded reads of files and directories: the only way probes look at the filesystem.
// Nothing here follows a FIFO forever or reads more than the caller allows.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace isoprobe {

inline constexpr std::size_t kMaxFileRead = 1 << 20;  // 1 MiB per file

struct FileRead {
  std::string data;
  bool truncated = false;  // the file held more than the bound
  int err = 0;             // errno of open/read; 0 when the read worked
  bool ok() const { return err == 0; }
};

// Reads at most max_bytes of path (opened non-blocking, close-on-exec, no controlling tty).
FileRead read_file_bounded(const std::string& path, std::size_t max_bytes = kMaxFileRead);

struct DirList {
  std::vector<std::string> names;  // without "." and ".."; in directory order
  bool truncated = false;
  int err = 0;
};

// At most max_entries names of a directory.
DirList list_dir(const std::string& path, std::size_t max_entries = 65536);

// lstat-based existence; err set to errno when absent or unreadable.
bool path_exists(const std::string& path, int* err = nullptr);

}  // namespace isoprobe
