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
void refuse_capabilities_unknown_to(OciRuntime runtime, const SandboxSpec& spec);

// The names in `caps` that this process's bounding set (/proc/self/status CapBnd) lacks,
// comma-separated; "" when it holds them all or cannot be read.
std::string capabilities_outside_own_bounding_set(const std::vector<std::string>& caps);

// What the bundle binds besides the image: made before the container starts.
struct PodMounts {
  std::string service_account_dir;             // "" when the values automount no token
  std::vector<std::string> host_path_sources;  // one per spec.host_paths, in order: staging points
};

// Opens each host path without following links (creating a DirectoryOrCreate one, root's,
// 0755) and binds it by descriptor at a staging point under `bundle_dir`
// (host_path_bind.h), makes the mount points in `rootfs`, and writes the service-account
// token directory under `bundle_dir` when the spec asks for one. Throws InfraError naming
// the control; staging points already bound stay for teardown to unmount.
PodMounts prepare_pod_mounts(const SandboxSpec& spec, const std::string& bundle_dir,
                             const std::string& rootfs);

}  // namespace isoharness::deploy::local
