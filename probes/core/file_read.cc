#include "probes/core/file_read.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace isoprobe {

FileRead read_file_bounded(const std::string& path, std::size_t max_bytes) {
  FileRead out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    out.err = errno;
    return out;
  }
  char buf[16384];
  while (out.data.size() < max_bytes) {
    std::size_t want = std::min(sizeof buf, max_bytes - out.data.size());
    ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      out.err = errno;
      break;
    }
    if (n == 0) break;
    out.data.append(buf, static_cast<std::size_t>(n));
  }
  if (out.err == 0 && out.data.size() >= max_bytes) {
    char probe;
    ssize_t n = ::read(fd, &probe, 1);
    out.truncated = n > 0;
  }
  ::close(fd);
  return out;
}

DirList list_dir(const std::string& path, std::size_t max_entries) {
  DirList out;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) {
    out.err = errno;
    return out;
  }
  while (true) {
    errno = 0;
    dirent* e = ::readdir(dir);
    if (!e) {
      out.err = errno;
      break;
    }
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (out.names.size() >= max_entries) {
      out.truncated = true;
      break;
    }
    out.names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  return out;
}

bool path_exists(const std::string& path, int* err) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (err) *err = 0;
    return true;
  }
  if (err) *err = errno;
  return false;
}

}  // namespace isoprobe
