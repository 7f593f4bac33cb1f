// The local backend: real runc and runsc (gVisor, ptrace platform) sandboxes on this
// machine, in a network world made of the project's own namespaces, with egress policy
// enforced by nftables outside each sandbox. See README.md in this folder.
//
//   auto backend = make_local_backend(profile_json, LocalOptions{});
//   deploy::SandboxHandle h = backend->deploy(request);   // SSH-ready on return
//   ...                                                   // ssh -J jump sandbox -p 2222
//   backend->destroy(h);                                  // and the world goes with the backend
//
// Everything carries the run id and is recorded under the state root, so a crashed run
// can be removed with cleanup_run() / `isoharness local cleanup`.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/deploy/local/drop_point.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/run_state.h"
#include "harness/deploy/local/sandbox_spec.h"
#include "harness/deploy/local/up_record.h"
#include "harness/deploy/witness_log.h"

namespace isoharness::deploy::local {

struct LocalOptions {
  std::string run_id;                          // empty = a new random id
  std::string state_root = kDefaultStateRoot;  // /run/isoharness
  std::string helper_path;      // empty = isoharness-world-helper found by default_helper_path()
  std::string isoprobe_bundle;  // empty = default_isoprobe_bundle(); sibling services' listener
  std::string seccomp_profile = "/usr/share/containers/seccomp.json";
  std::chrono::milliseconds ssh_ready_timeout{30000};
  int noisy_duty_percent = 50;  // the non-tier neighbour's busy share of each period
  // A stand-in platform's own ingress rule over every sandbox of the world (nft_rules.h).
  PlatformIngress platform_ingress = PlatformIngress::none;
};

class World;
struct DeployedSandbox;
struct LaunchContext;

class LocalBackend : public Backend {
 public:
  // Builds the world (node, jumphost, world namespaces, dnsmasq, servers, jumphost sshd).
  // Throws InfraError naming what could not be set up; nothing is left behind then.
  LocalBackend(const nlohmann::json& profile, LocalOptions options);
  // Destroys every sandbox still deployed, then the world, then the run's state.
  ~LocalBackend() override;

  std::string name() const override {
    return std::string(scenario::backend_name(scenario::BackendKind::local));
  }
  SandboxHandle deploy(const SandboxRequest& request) override;
  void destroy(const SandboxHandle& handle) noexcept override;
  std::vector<EgressTarget> egress_targets() const override;
  std::vector<EgressTarget> item_egress_targets(const nlohmann::json& expect) const override;
  std::optional<WitnessView> witness(const SandboxHandle& handle, const std::string& nonce,
                                     std::chrono::system_clock::time_point from,
                                     std::chrono::system_clock::time_point to) const override;
  // Read from this machine's /proc and the runtimes' state (node_observer.h), for the
  // agent's container and each sibling's.
  std::optional<NodeView> node_view(const SandboxHandle& handle) const override;
  // The containers of a deployed sandbox: the agent's ("default") first, then each
  // sibling's; empty for a sandbox this backend does not hold.
  std::vector<UpContainer> containers(const SandboxHandle& handle) const;
  nlohmann::json context() const override;

  const std::string& run_id() const { return paths_.run_id; }
  const RunPaths& paths() const { return paths_; }
  // The jumphost as the host sees it (user, address, port 22, pinned key).
  SshEndpoint jump_endpoint() const;

 private:
  LaunchContext launch_context(int ssh_ready_ms) const;
  // Tears down an item attempt (siblings, agent, resolver) and frees its indexes.
  void release(DeployedSandbox& sb) noexcept;
  void launch_item(DeployedSandbox& sb, const SandboxSpec& spec, std::vector<SandboxSpec>& sibling_specs,
                   const SandboxRequest& request, bool weaken_none);

  LocalProfile profile_;
  LocalOptions options_;
  RunPaths paths_;
  std::string kernel_release_;
  std::unique_ptr<World> world_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<DeployedSandbox>> sandboxes_;
  std::vector<bool> index_in_use_;
  // Addresses the witness stopped logging (a "quota" line): never handed out again in this
  // run. Guarded by mutex_.
  mutable std::set<std::string> spent_addresses_;
  void retire_if_quota_spent(const WitnessLog& log, const SandboxHandle& handle) const;
  // The drop point's counts at each sandbox's last reading (witness()), by sandbox name.
  mutable std::mutex drops_mutex_;
  mutable std::map<std::string, std::vector<DropCount>> drops_seen_;
};

// The drop point's counts for the sandbox of run `paths` now; nullopt with `why` when they
// cannot be read.
std::optional<std::vector<DropCount>> world_drop_counts(const RunPaths& paths, const WorldSandbox& sb,
                                                        std::string& why);

// What the world's witnesses of run `paths` saw of the sandbox in a probe's window: the
// arrival witness's log (read once it wrote a fresh heartbeat, until its heartbeats cover
// the window), and the drop point (the nft counters' rise since `drops_before`, which
// becomes their counts now, and the name proxy's decisions). `each_log` sees every log
// read. LocalBackend::witness is this; so is `check` of a `local up` sandbox.
WitnessView read_world_witness(const RunPaths& paths, const WorldSandbox& sb, const std::string& nonce,
                               std::chrono::system_clock::time_point from,
                               std::chrono::system_clock::time_point to, std::vector<DropCount>& drops_before,
                               const std::function<void(const WitnessLog&)>& each_log = {});

std::unique_ptr<LocalBackend> make_local_backend(const nlohmann::json& profile, LocalOptions options = {});

// The egress targets of every local world (the same addresses in each): what the probes
// try, also for `isoharness check` on a sandbox from `isoharness local up`.
std::vector<EgressTarget> world_targets();
// The targets an item's allowDomainsPorts adds (docs/CONTRACTS.md "Allow-list scope"), on
// target.example.com: `target-port-<P>` (TCP) and `target-udp-<P>` (UDP) for each listed
// entry that applies to it (ANY: both), and `target-port-unlisted` on unlisted_domain_port()
// (nft_rules.h), the latter for every item (blocked unless a list or "*" opens it).
std::vector<EgressTarget> domain_port_targets(const nlohmann::json& expect);

// Where isoharness-world-helper is: $ISOHARNESS_WORLD_HELPER, else
// <prefix>/lib/isoharness/, else the build tree's (harness/common/install_paths.h); empty
// when none is found.
std::string default_helper_path();
// Where the isoprobe bundle is: probes/isoprobe-bundle above the running program, else
// the build tree's. Empty when neither exists.
std::string default_isoprobe_bundle();

// A test weakening of the local backend (SandboxRequest::test_weakenings; weakenings.cc
// lists every one): `networkIsolated: true` (network_mode none) services keep peers and
// stay reachable, as if the policy forgot them.
inline constexpr const char* kWeakenNoneSiblingReachable = "none-sibling-reachable";

// One prerequisite of the local backend, checked on this machine.
struct DoctorCheck {
  std::string check;  // what was checked
  bool ok = false;
  std::string detail;      // what was found
  std::string how_to_fix;  // exact command or step when not ok
};
std::vector<DoctorCheck> doctor(const LocalOptions& options = {});

}  // namespace isoharness::deploy::local
