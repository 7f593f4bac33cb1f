// What one sandbox must be, read from the item's rendered sandbox values
// (docs/CONTRACTS.md §1) and the deployment profile. Parsing only: no I/O.
//
// Deny by default: a key the local backend does not know how to apply is refused with an
// error that names it, never ignored.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/deploy/local/oci_runtime.h"
#include "harness/deploy/local/service_settings.h"

namespace isoharness::deploy::local {

struct ScratchMount {
  std::string volume;  // emptyDir volume name
  std::string path;    // absolute mount path inside the sandbox
};

// A hostPath volume mounted into the service (docs/CONTRACTS.md §5): the local backend
// takes sources only under kHostPathRoot, never the node's own files (docs/SECURITY.md).
struct HostPathMount {
  std::string volume;     // the volume's name
  std::string host_path;  // absolute, under kHostPathRoot
  std::string path;       // absolute mount path inside the sandbox
  bool read_only = false;
  bool create = false;  // hostPath.type DirectoryOrCreate
};

inline constexpr const char* kHostPathRoot = "/var/lib/isoharness/host-paths";

// One allowDomainsPorts entry: a port an allowed domain opens beyond TCP 80/443, with no
// name check (the chart's rule; docs/CONTRACTS.md "Allow-list scope").
struct DomainPort {
  int port = 0;
  std::string protocol = "ANY";  // "TCP", "UDP" or "ANY"
  std::string domain;            // "" = every allowed domain, else that allowDomains entry only
};

struct SandboxSpec {
  std::string image;          // recorded only: the local image is this machine's OS
  std::string runtime_class;  // "" = the node's default runtime
  bool gpu = false;
  std::string network_mode;               // "none" for networkIsolated, else ""
  std::vector<std::string> capabilities;  // the set the process keeps ("CAP_*")
  bool drop_all = false;
  bool no_new_privileges = false;
  std::string seccomp = "RuntimeDefault";  // or "Unconfined"
  std::int64_t uid = 1000;                 // the local image's configured user is agent (1000)
  std::int64_t gid = 1000;
  bool run_as_user_set = false;
  bool run_as_non_root = false;
  bool read_only_root = false;
  std::vector<ScratchMount> scratch;
  std::vector<HostPathMount> host_paths;
  bool service_account_token = false;  // values.automountServiceAccountToken
  bool proc_unmasked = false;          // securityContext.procMount: Unmasked
  std::vector<std::string> allow_domains;
  std::vector<std::string> allow_cidr;
  std::vector<std::string> allow_entities;
  std::vector<DomainPort> allow_domains_ports;
  std::string service = "default";          // the service of the values this spec describes
  std::vector<std::string> other_services;  // the item's services besides "default" (its siblings)
  ServiceSettings settings;                 // env, workingDir, resources of the service
};

struct NodeClass {
  std::string cpuset;  // e.g. "1" or "0-1"
  bool noisy_neighbour = false;
};

struct LocalProfile {
  std::map<std::string, NodeClass> node_classes;
  std::map<std::string, OciRuntime> runtime_handlers;  // runtime class -> its OCI runtime
  // `jumphost_link: {rtt_ms, loss_percent}`: the host <-> jumphost link made far (world.h).
  int link_rtt_ms = 0;
  double link_loss_percent = 0;
};

// Reads the item's values. Throws UserError listing every malformed key (with its JSON
// path) and InfraError naming a control the local backend cannot apply.
// `source` names where the values came from (file or plan item) in every message.
// `service` picks the service; the item-wide keys (allowDomains, ...) apply to each.
SandboxSpec parse_sandbox_values(const nlohmann::json& values, const std::string& source = "values",
                                 const std::string& service = "default");

// Reads profile["node_classes"], profile["runtime_handlers"] and profile["jumphost_link"]
// (rtt_ms 0..2000, loss_percent 0..50). Throws UserError.
LocalProfile parse_local_profile(const nlohmann::json& profile);

// The OCI runtime for a spec: runc when no runtime class, else the profile's handler.
// Throws InfraError naming the class when the profile has no handler for it.
OciRuntime runtime_for(const SandboxSpec& spec, const LocalProfile& profile);

// The profile used when the caller gives none (scenarios/deployments/local.yaml's shape).
nlohmann::json default_local_profile();

}  // namespace isoharness::deploy::local
