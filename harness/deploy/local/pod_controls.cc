#include "harness/deploy/local/pod_controls.h"

#include <sys/stat.h>

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
#include "harness/deploy/local/host_path_bind.h"
#include "harness/deploy/local/oci_spec.h"

namespace isoharness::deploy::local {
namespace {

namespace fs = std::filesystem;

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

void refuse_capabilities_unknown_to(OciRuntime runtime, const SandboxSpec& spec) {
  if (runtime == OciRuntime::runc) {
    const std::string missing = capabilities_outside_own_bounding_set(spec.capabilities);
    if (!missing.empty())
      throw InfraError("control securityContext.capabilities.add: isoharness's own bounding set lacks " +
                       missing + ", so runc cannot grant it; the sandbox is not started");
  }
  if (runtime != OciRuntime::runsc) return;
  std::string unknown;
  for (const char* cap : {"CAP_BPF", "CAP_PERFMON", "CAP_CHECKPOINT_RESTORE"})
    if (std::find(spec.capabilities.begin(), spec.capabilities.end(), cap) != spec.capabilities.end())
      unknown += (unknown.empty() ? "" : ", ") + std::string(cap);
  if (!unknown.empty())
    throw InfraError("control securityContext.capabilities.add: runsc (gVisor) does not know " + unknown +
                     " and refuses to start a sandbox that names it (\"unknown capability\"); the "
                     "sandbox is not started (not applicable under gVisor, docs/SECURITY.md)");
}

PodMounts prepare_pod_mounts(const SandboxSpec& spec, const std::string& bundle_dir,
                             const std::string& rootfs) {
  PodMounts out;
  for (std::size_t i = 0; i < spec.host_paths.size(); ++i) {
    out.host_path_sources.push_back(bind_host_path(spec.host_paths[i], bundle_dir, i));
    make_mount_point(rootfs, spec.host_paths[i].path);
  }
  if (!spec.service_account_token) return out;
  make_mount_point(rootfs, kServiceAccountPath);
  out.service_account_dir = write_service_account_dir(bundle_dir);
  return out;
}

}  // namespace isoharness::deploy::local
