#include "harness/deploy/local/pod_controls.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "harness/common/error.h"
#include "harness/deploy/local/capabilities.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/oci_spec.h"

namespace isoharness::deploy::local {
namespace {

namespace fs = std::filesystem;

// The directory must be a real directory, reached through no symlink: a path under
// kHostPathRoot that is a link could point anywhere on the node. It is opened, not just
// checked, and bound by its descriptor (HeldHostPaths).
void hold_host_directory(const HostPathMount& h, HeldHostPaths& held) {
  std::error_code ec;
  if (h.create) {
    fs::create_directories(h.host_path, ec);
    if (ec) throw InfraError("control hostPath " + h.host_path + ": cannot create: " + ec.message());
  }
  std::string why;
  const int fd = open_directory_no_links(h.host_path, why);
  if (fd < 0)
    throw InfraError("control hostPath " + h.host_path +
                     ": not an existing directory reached without symlinks (" + why +
                     "; hostPath.type Directory; DirectoryOrCreate creates it)");
  held.hold(fd);
}

// Creates rootfs + path one step at a time, refusing a step that is a symlink: the image
// has absolute links (/var/run -> /run) that, followed from the host, lead out of it.
void make_mount_point(const std::string& rootfs, const std::string& path) {
  std::string at = rootfs;
  std::size_t pos = 1;
  while (pos <= path.size()) {
    const std::size_t next = std::min(path.find('/', pos), path.size());
    at += "/" + path.substr(pos, next - pos);
    pos = next + 1;
    struct stat st {};
    if (::lstat(at.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
        throw InfraError("cannot mount a volume at " + path + ": " + at.substr(rootfs.size()) +
                         " in the image is a symlink or not a directory");
      continue;
    }
    if (::mkdir(at.c_str(), 0755) != 0)
      throw InfraError("cannot create the mount point " + path + " in the image: " + std::strerror(errno));
  }
}

// A token of no cluster: random bytes, so that a sandbox which reads it learns nothing,
// and a file layout as the kubelet's projected volume has it (token, ca.crt, namespace).
std::string write_service_account_dir(const std::string& bundle_dir) {
  std::string dir = bundle_dir + "/serviceaccount";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw InfraError("control automountServiceAccountToken: cannot create " + dir + ": " + ec.message());
  std::random_device rd;
  std::string token = "isoharness-local-token-";
  const char* hex = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) token += hex[rd() % 16];
  write_file(dir + "/token", token, 0644);
  write_file(dir + "/namespace", "isoharness-local\n", 0644);
  write_file(dir + "/ca.crt", "", 0644);
  return dir;
}

}  // namespace

std::string capabilities_outside_own_bounding_set(const std::vector<std::string>& caps) {
  std::ifstream status("/proc/self/status");
  std::string line;
  std::uint64_t bounding = 0;
  bool found = false;
  while (!found && std::getline(status, line))
    if (line.rfind("CapBnd:", 0) == 0) {
      bounding = std::strtoull(line.c_str() + 7, nullptr, 16);
      found = true;
    }
  std::string missing;
  for (const auto& c : caps) {
    const auto bit = capability_number(c);
    if (found && bit && !(bounding >> *bit & 1U)) missing += (missing.empty() ? "" : ", ") + c;
  }
  return missing;
}

void refuse_capabilities_unknown_to(const std::string& runtime, const SandboxSpec& spec) {
  if (runtime == "runc") {
    const std::string missing = capabilities_outside_own_bounding_set(spec.capabilities);
    if (!missing.empty())
      throw InfraError("control securityContext.capabilities.add: isoharness's own bounding set lacks " +
                       missing + ", so runc cannot grant it; the sandbox is not started");
  }
  if (runtime != "runsc") return;
  std::string unknown;
  for (const char* cap : {"CAP_BPF", "CAP_PERFMON", "CAP_CHECKPOINT_RESTORE"})
    if (std::find(spec.capabilities.begin(), spec.capabilities.end(), cap) != spec.capabilities.end())
      unknown += (unknown.empty() ? "" : ", ") + std::string(cap);
  if (!unknown.empty())
    throw InfraError("control securityContext.capabilities.add: runsc (gVisor) does not know " + unknown +
                     " and refuses to start a sandbox that names it (\"unknown capability\"); the "
                     "sandbox is not started (not applicable under gVisor, docs/SECURITY.md)");
}

int open_directory_no_links(const std::string& path, std::string& why) {
  if (path.empty() || path[0] != '/') {
    why = "not an absolute path";
    return -1;
  }
  int at = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (at < 0) {
    why = std::string("/: ") + std::strerror(errno);
    return -1;
  }
  std::size_t pos = 1;
  while (pos < path.size()) {
    const std::size_t next = std::min(path.find('/', pos), path.size());
    const std::string part = path.substr(pos, next - pos);
    pos = next + 1;
    if (part.empty() || part == ".") continue;
    const int fd = part == ".." ? -1 : ::openat(at, part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    const int err = part == ".." ? EINVAL : errno;
    ::close(at);
    if (fd < 0) {
      why = path.substr(0, next) + ": " + std::strerror(err);
      return -1;
    }
    at = fd;
  }
  struct stat st {};
  if (::fstat(at, &st) != 0 || !S_ISDIR(st.st_mode)) {
    ::close(at);
    why = S_ISLNK(st.st_mode) ? "a symlink" : "not a directory";
    return -1;
  }
  return at;
}

HeldHostPaths::~HeldHostPaths() {
  for (int fd : fds_) ::close(fd);
}

void HeldHostPaths::hold(int fd) {
  fds_.push_back(fd);
  sources_.push_back("/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd));
}

std::string prepare_pod_mounts(const SandboxSpec& spec, const std::string& bundle_dir,
                               const std::string& rootfs, HeldHostPaths& held) {
  for (const auto& h : spec.host_paths) {
    hold_host_directory(h, held);
    make_mount_point(rootfs, h.path);
  }
  if (!spec.service_account_token) return "";
  make_mount_point(rootfs, kServiceAccountPath);
  return write_service_account_dir(bundle_dir);
}

}  // namespace isoharness::deploy::local
