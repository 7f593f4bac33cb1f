// What `run`, `parity` and `check` need around their sandboxes: a run id, a key pair for
// the run, signal handling that lets every sandbox be torn down, and where the deployment
// profile, scenarios and isoprobe bundle are. Backends are made in deploy/factory.
#pragma once

#include <atomic>
#include <csignal>
#include <memory>
#include <string>

#include "harness/scenario/scenario.h"

namespace isoharness::runner {

// Set by SIGINT/SIGTERM while a SignalGuard lives.
extern std::atomic<bool> g_interrupted;

// While a run is under way SIGINT/SIGTERM only set g_interrupted: every job stops at its
// next step and every sandbox and the world are torn down before the process exits.
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Six characters of [a-z0-9].
std::string random_run_id();

// An ed25519 key pair for this run only, in a private temporary directory removed with it.
class RunKey {
 public:
  explicit RunKey(const std::string& run_id);  // throws InfraError
  ~RunKey();
  RunKey(const RunKey&) = delete;
  RunKey& operator=(const RunKey&) = delete;
  const std::string& private_path() const { return private_path_; }
  std::string public_path() const { return private_path_ + ".pub"; }
  const std::string& public_line() const { return public_line_; }

 private:
  std::string dir_, private_path_, public_line_;
};

// --deployment, else <scenarios_dir>/deployments/<backend>.yaml; UserError when neither
// (an empty scenarios_dir means none was found: the error says where it looked).
std::string find_deployment(const std::string& given, const std::string& scenarios_dir,
                            scenario::BackendKind backend);

// The two builds of isoprobe: the full bundle (posture and the timing workloads, what
// `parity` uploads) and the posture-only static agent (what `run` uploads).
inline constexpr const char* kFullBundleDir = "isoprobe-bundle";
inline constexpr const char* kPostureAgentDir = "isoprobe-posture";

// --isoprobe-bundle, else $ISOHARNESS_PROBE_DIR (bundle) or $ISOHARNESS_POSTURE_AGENT_DIR
// (agent), else <prefix>/lib/isoharness/<build_dir>, else the build tree's
// (harness/common/install_paths.h); UserError when there is none.
std::string find_isoprobe_bundle(const std::string& given, const std::string& build_dir = kFullBundleDir);

}  // namespace isoharness::runner
