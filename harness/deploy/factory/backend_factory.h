// Making the backend a run asks for (local or hawk) from its deployment profile, and the egress
// targets a deployment's probes try. The runner and `isoharness check` come here; nothing
// above deploy/ names a backend's own types.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/scenario/scenario.h"

namespace isoharness::deploy {

struct BackendOptions {
  std::string run_id;
  std::string work_dir;                      // the run's output directory (hawk writes configs there)
  bool accept_new_host_keys = false;         // --accept-new-host-keys
  std::atomic<bool>* interrupted = nullptr;  // set by SIGINT/SIGTERM
};

// Throws UserError for `existing` (nothing to make), a profile made for another backend, or a hawk
// profile without a pinned jumphost key (unless accept_new_host_keys); InfraError when the
// backend cannot start (e.g. the local world cannot be built).
std::unique_ptr<Backend> make_backend(scenario::BackendKind backend,
                                      const scenario::DeploymentProfile& profile,
                                      const BackendOptions& options);

// The profile's `egress:` targets, else the local world's (what every test here uses); with
// a witness: section, also the targets aimed at the operator's witness (canary-tcp,
// canary-udp, canary-icmp, canary6-*, dns-exfil), and only targets aimed at a canary are
// covered by it.
std::vector<EgressTarget> probe_targets(const scenario::DeploymentProfile& profile);

// Targets for the domains an item allows, on the profile's egress.allowed_domain_port
// (none without an egress section: the local world has its own allowed target): the domain,
// its scope (domain_scope_targets), UDP 53 to it (`-udp`, which allowDomains never opens, as
// the local world's target-udp) and the ports the item's allowDomainsPorts lists for it
// (domain_port_scope_targets, from `expect`).
std::vector<EgressTarget> allowed_domain_targets(const scenario::DeploymentProfile& profile,
                                                 const std::vector<std::string>& allow_domains,
                                                 const nlohmann::json& expect = nlohmann::json::object());

}  // namespace isoharness::deploy
