#include "harness/deploy/local/host_path_bind.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <utility>

#include "harness/common/error.h"
#include "harness/deploy/local/host_ops.h"

namespace isoharness::deploy::local {
namespace {

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    reset(o.release());
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

[[noreturn]] void refuse_host_path(const HostPathMount& h, const std::string& why) {
  throw InfraError("control hostPath " + h.host_path + ": " + why +
                   " (hostPath.type Directory; DirectoryOrCreate creates it; the source is opened "
                   "without following any symlink and bound by descriptor)");
}

// One step down from `dir`: the directory `name`, never through a symlink. A missing step
// is created (root's, 0755) when `create`; a step another process creates meanwhile is
// opened as it is, and still must not be a link.
Fd open_step(const HostPathMount& h, int dir, const std::string& name, bool create) {
  constexpr int kFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(dir, name.c_str(), kFlags);
  if (fd < 0 && errno == ENOENT && create) {
    if (::mkdirat(dir, name.c_str(), 0755) != 0 && errno != EEXIST)
      refuse_host_path(h, "cannot create " + name + ": " + std::strerror(errno));
    fd = ::openat(dir, name.c_str(), kFlags);
  }
  if (fd < 0)
    refuse_host_path(h, errno == ENOENT
                            ? name + " does not exist"
                            : name + " is a symlink or not a directory (" + std::strerror(errno) + ")");
  Fd step(fd);
  struct stat st {};
  if (::fstat(step.get(), &st) != 0 || !S_ISDIR(st.st_mode))
    refuse_host_path(h, name + " is a symlink or not a directory");
  return step;
}

// The source, opened from "/" one component at a time.
Fd open_source(const HostPathMount& h) {
  if (h.host_path.empty() || h.host_path.front() != '/') refuse_host_path(h, "not an absolute path");
  Fd at(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (at.get() < 0) refuse_host_path(h, std::string("cannot open /: ") + std::strerror(errno));
  std::istringstream steps(h.host_path.substr(1));
  std::string name;
  while (std::getline(steps, name, '/')) {
    if (name.empty() || name == "." || name == "..") refuse_host_path(h, "has an empty, . or .. step");
    at = open_step(h, at.get(), name, h.create);
  }
  return at;
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

std::string host_path_staging_dir(const std::string& bundle_dir) {
  return bundle_dir + "/host-paths";
}

std::string bind_host_path(const HostPathMount& h, const std::string& bundle_dir, std::size_t n) {
  const Fd source = open_source(h);
  struct stat opened {};
  if (::fstat(source.get(), &opened) != 0) refuse_host_path(h, std::string("fstat: ") + std::strerror(errno));

  const std::string staging = host_path_staging_dir(bundle_dir);
  std::string point = staging + "/" + std::to_string(n);  // returned: not const, so it moves
  if ((::mkdir(staging.c_str(), 0700) != 0 && errno != EEXIST) || ::mkdir(point.c_str(), 0700) != 0)
    refuse_host_path(h, "cannot create its staging point " + point + ": " + std::strerror(errno));
  const std::string by_fd = "/proc/self/fd/" + std::to_string(source.get());
  if (::mount(by_fd.c_str(), point.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
    refuse_host_path(h, "cannot bind the opened directory at " + point + ": " + std::strerror(errno));

  struct stat staged {};
  if (::lstat(point.c_str(), &staged) != 0 || !same_inode(staged, opened)) {
    ::umount2(point.c_str(), MNT_DETACH);
    refuse_host_path(h, "the staging point " + point + " does not show the directory that was opened");
  }
  return point;
}

std::string unescape_mount_path(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (std::size_t k = 1; k <= 3; ++k) {
        const char c = s[i + k];
        ok = ok && c >= '0' && c <= '7';
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string> mount_points_under(const std::string& dir) {
  std::vector<std::string> points;
  // Never the whole tree: "" or "/" would name every mount of the node.
  if (dir.size() < 2 || dir.front() != '/' || dir.back() == '/') return points;
  std::istringstream table(read_file_bounded("/proc/self/mountinfo", 4 << 20));
  std::string line;
  while (std::getline(table, line)) {
    std::istringstream in(line);
    std::string id, parent, devno, root, point;
    if (!(in >> id >> parent >> devno >> root >> point)) continue;
    point = unescape_mount_path(point);
    if (point == dir || point.rfind(dir + "/", 0) == 0) points.push_back(point);
  }
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return points;
}

std::vector<std::string> unmount_all_under(const std::string& dir) {
  // A point can hold mounts stacked on each other: each pass takes off the top one.
  std::string last_error = "still mounted";
  for (int pass = 0; pass < 4; ++pass)
    for (const auto& p : mount_points_under(dir))
      if (::umount2(p.c_str(), MNT_DETACH) != 0) last_error = std::strerror(errno);
  std::vector<std::string> left;
  for (const auto& p : mount_points_under(dir)) left.push_back(p + ": " + last_error);
  return left;
}

}  // namespace isoharness::deploy::local
