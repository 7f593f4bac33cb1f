// The pod-level values of the escape classes (docs/SECURITY.md, "Escape classes"), as the
// local backend applies them before a container starts: the host-path directories a
// hostPath volume names, a service-account token directory, the mount points both need in
// the image, and the capabilities the runtime itself does not know.
#pragma once

#include <string>
#include <vector>

#include "harness/deploy/local/sandbox_spec.h"

namespace isoharness::deploy::local {

// Throws InfraError, naming the control, when `runtime` cannot apply the spec's
// capabilities: runsc (20221219) refuses to start a sandbox whose spec names CAP_BPF,
// CAP_PERFMON or CAP_CHECKPOINT_RESTORE ("unknown capability"). Checked before anything
// of the sandbox is created.
// Under runc, also refuses capabilities outside isoharness's own bounding set: runc can
// grant only what its caller may hold ("unable to apply caps").
void refuse_capabilities_unknown_to(const std::string& runtime, const SandboxSpec& spec);

// The names in `caps` that this process's bounding set (/proc/self/status CapBnd) lacks,
// comma-separated; "" when it holds them all or cannot be read.
std::string capabilities_outside_own_bounding_set(const std::vector<std::string>& caps);

// An absolute path opened one component at a time from "/" with O_PATH | O_NOFOLLOW, so no
// step may be a symlink, and the last must be a directory. Returns the descriptor, or -1
// with `why` set.
int open_directory_no_links(const std::string& path, std::string& why);

// The host-path directories of one sandbox, held open from the check until its container
// has started. The OCI spec binds each as "/proc/<this process>/fd/<fd>": that names the
// directory that was checked, not its path, so a link swapped in after the check changes
// nothing.
class HeldHostPaths {
 public:
  HeldHostPaths() = default;
  ~HeldHostPaths();
  HeldHostPaths(const HeldHostPaths&) = delete;
  HeldHostPaths& operator=(const HeldHostPaths&) = delete;
  void hold(int fd);
  // One bind source per host path, in the spec's order.
  const std::vector<std::string>& sources() const { return sources_; }

 private:
  std::vector<int> fds_;
  std::vector<std::string> sources_;
};

// Creates a DirectoryOrCreate host path (root-owned, 0755), opens every host path without
// following links into `held`, makes the mount points in `rootfs`, and writes the
// service-account token directory under `bundle_dir` when the spec asks for one. Returns
// that directory, or "" when none. Throws InfraError naming the control.
std::string prepare_pod_mounts(const SandboxSpec& spec, const std::string& bundle_dir,
                               const std::string& rootfs, HeldHostPaths& held);

}  // namespace isoharness::deploy::local
