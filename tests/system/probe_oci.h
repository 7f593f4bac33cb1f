// A minimal OCI bundle for running the isoprobe bundle under runc and runsc, used by the
// isoprobe system test and by bench/probe_posture_bench. The rootfs holds nothing but
// the isoprobe bundle (in /isoprobe) and empty mount points. Everything it creates (the
// temp dir, runtime state dirs, containers) is removed by the destructor, on every path.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "harness/common/expected.h"
#include "harness/common/subprocess.h"

namespace isoharness::probe_test {

enum class Runtime { runc, runsc };
std::string runtime_name(Runtime r);

struct ContainerSpec {
  bool drop_capabilities = true;  // every capability set empty
  bool no_new_privileges = true;
  bool seccomp_filter = true;  // a RuntimeDefault-like filter (runsc ignores it without --oci-seccomp)
  bool read_only_root = true;  // with a tmpfs at /tmp
};

struct ContainerRun {
  RunResult result;
  double wall_ms = 0;  // from starting the runtime until it exited
};

class ProbeBundle {
 public:
  // bundle_dir: ${CMAKE_BINARY_DIR}/probes/isoprobe-bundle. Creates /tmp/ih-<runid>-probe-*.
  explicit ProbeBundle(const std::string& bundle_dir);
  ~ProbeBundle();
  ProbeBundle(const ProbeBundle&) = delete;
  ProbeBundle& operator=(const ProbeBundle&) = delete;

  const std::string& run_id() const { return run_id_; }

  // Writes config.json for this spec and runs `/isoprobe/isoprobe ARGS` to completion
  // under the runtime (runsc: --platform=ptrace --network=none). Stdout is a pipe.
  Expected<ContainerRun> run(Runtime runtime, const ContainerSpec& spec, const std::vector<std::string>& args,
                             std::chrono::milliseconds deadline);

 private:
  std::string write_config(const ContainerSpec& spec, const std::vector<std::string>& args) const;
  std::string dir_, run_id_;
  int counter_ = 0;
  std::vector<std::pair<Runtime, std::string>> containers_;  // to delete on the way out
};

// The host's /proc/sys/kernel/random/boot_id, trimmed.
std::string host_boot_id();

}  // namespace isoharness::probe_test
