// A hostPath source bound by descriptor, so that what the sandbox gets is the directory
// that was checked, not whatever a path names a moment later.
//
// The race it closes: a hostPath source is a path under kHostPathRoot, and a sandbox given
// a writable hostPath (or anything else that can write under that root) can put a symlink
// where the next sandbox's source is. Checking the path and then handing the same path to
// the runtime leaves a window in which the link is swapped in and the runtime binds the
// node's own files. runc cannot be handed the descriptor itself (asked to bind
// /proc/<pid>/fd/N it answers EINVAL), so the harness binds the opened directory itself:
//   1. it opens the source one component at a time from "/", each step with O_NOFOLLOW
//      (a symlink anywhere on the way refuses the control), creating a missing step only
//      for DirectoryOrCreate, and checks the end is a directory;
//   2. it bind-mounts that descriptor (mount(2) of /proc/self/fd/N resolves to the opened
//      directory, never to a path) onto a staging point inside the sandbox's own bundle
//      directory, which only the harness can write;
//   3. it checks that the staging point now shows the same device and inode as the
//      descriptor, and hands the runtime the staging point.
// Teardown unmounts the staging points before the bundle directory is removed: removing
// it while one is mounted would delete the host directory's contents.
#pragma once

#include <string>
#include <vector>

#include "harness/deploy/local/sandbox_spec.h"

namespace isoharness::deploy::local {

// Where the staging points of a bundle live.
std::string host_path_staging_dir(const std::string& bundle_dir);

// Steps 1–3 for the n-th host path of a sandbox; returns the staging point to hand the
// runtime as the bind's source. Throws InfraError naming the control and the path.
std::string bind_host_path(const HostPathMount& h, const std::string& bundle_dir, std::size_t n);

// Unmounts every mount at or below `dir` (deepest first, lazily). Returns what could not
// be unmounted, each as "<path>: <error>"; empty when nothing is left mounted there.
std::vector<std::string> unmount_all_under(const std::string& dir);

// The mount points at or below `dir` in this process's mount namespace, deepest first;
// none for a `dir` that is not an absolute path below "/" (never the node's every mount).
std::vector<std::string> mount_points_under(const std::string& dir);

// Octal escapes of /proc/self/mountinfo paths undone ("\040" is a space).
std::string unescape_mount_path(const std::string& s);

}  // namespace isoharness::deploy::local
