// A minimal OCI bundle for running isoprobe's workloads directly under runc and
// runsc-ptrace, shared by the workloads system test and the getpid cross-check bench.
//
// The rootfs is read-only: a read-only bind of the host's /usr with the usual merged-/usr
// symlinks (bin, lib, lib64, sbin), proc, a tmpfs /tmp (the workloads' scratch) and
// read-only binds of the directories the caller names. The container has its own pid,
// ipc, uts, mount and network namespaces (runsc: --network=none), no_new_privs, and runc's
// default capability set. Runtime state lives under the bundle's own --root directories;
// container ids carry a per-run prefix; everything is deleted in the destructor.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/common/expected.h"
#include "harness/common/subprocess.h"

namespace isoharness::workloads_test {

struct Bind {
  std::string host_dir;       // absolute
  std::string container_dir;  // absolute, e.g. /opt/isoprobe
};

class OciBundle {
 public:
  // Creates the bundle in a fresh temp dir; throws std::runtime_error on failure.
  explicit OciBundle(std::vector<Bind> binds);
  ~OciBundle();
  OciBundle(const OciBundle&) = delete;
  OciBundle& operator=(const OciBundle&) = delete;

  // Runs args in a new container under "runc" or "runsc" (ptrace platform, no network),
  // stdout captured through a pipe. The container is force-deleted afterwards.
  Expected<RunResult> run(const std::string& runtime, const std::vector<std::string>& args,
                          std::chrono::milliseconds deadline);

  const std::string& dir() const { return dir_; }
  const std::string& run_id() const { return run_id_; }

 private:
  void write_config(const std::vector<std::string>& args) const;

  std::string dir_;
  std::string run_id_;
  std::vector<Bind> binds_;
  int next_container_ = 0;
};

// The runtime's argv prefix up to (not including) "run": e.g. {"runsc", "--root", ...,
// "--platform=ptrace", "--network=none"}.
std::vector<std::string> runtime_argv(const std::string& runtime, const std::string& state_root);

// Where the isoprobe under test lives: the bundle launcher when the isoprobe helper's
// bundle has been built, else the plain executable. Empty when neither exists.
std::string isoprobe_path(const std::string& binary_dir);

}  // namespace isoharness::workloads_test
