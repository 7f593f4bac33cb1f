// One sandbox's life on this machine: its namespace and veth, its egress chain in the
// node, its bundle (image + config.json), the runc/runsc container running sshd, and the
// noisy neighbour of its node class. Internal to the local backend.
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/run_state.h"
#include "harness/deploy/local/sandbox_spec.h"
#include "harness/deploy/local/world.h"

namespace isoharness::deploy::local {

class World;

// Where a sibling service's isoprobe is mounted, and the port its listener serves.
inline constexpr const char* kSiblingProbeDir = "/opt/isoprobe";
inline constexpr int kSiblingPort = kSiblingProbePort;

struct DeployedSandbox {
  std::string name;
  int index = -1;
  OciRuntime runtime = OciRuntime::runc;
  std::string runtime_bin;
  std::string container;  // container id
  std::string netns;
  std::string address;
  std::string dir;  // bundle and logs
  SandboxEgress egress;
  std::vector<std::string> weakenings;  // selftest only (weakenings.h)
  std::string weakened_shared_dir;      // where oci:reused-home keeps the home directory
  pid_t noise_pid = -1;
  pid_t adopter_pid = -1;  // reaps the container's processes (run_detaching)
  // What exists, so teardown removes exactly that.
  bool netns_created = false;
  bool veth_created = false;  // the node-side end, egress.veth
  bool egress_added = false;
  bool container_started = false;
  SandboxHandle handle;
  // The agent's sandbox only: the item's other services and the attempt's own resolver.
  std::vector<std::unique_ptr<DeployedSandbox>> siblings;
  ItemResolver resolver;
};

struct LaunchContext {
  const RunPaths* paths;
  World* world;
  std::string helper_path;
  std::string seccomp_profile;
  std::string kernel_release;
  int noisy_duty_percent = 50;
  int ssh_ready_ms = 30000;
};

// Computes what the sandbox may reach from its spec (pure).
// Whether the item's lists grant everything: allowDomains "*", allowCIDR /0, allowEntities world.
bool egress_wants_everything(const SandboxSpec& spec);
SandboxEgress egress_for(const SandboxSpec& spec, int index, const std::string& veth,
                         const std::string& address);

// One service of an item, for link_item_egress.
struct ItemMember {
  std::string service;    // "default" is the agent's
  bool none = false;      // networkIsolated
  SandboxEgress* egress;  // computed by egress_for; completed here
};

// The node policy between the services of one item attempt: every service that is not
// `none` reaches every other such service and the item's resolver. A `none` service
// reaches nothing, is nobody's peer, and (unless it is the agent's, which the harness
// reaches through the jumphost) is sealed: no flow in. `weaken_none` is a test seam only:
// it leaves `none` services as open as default ones, so a test can prove verify notices.
void link_item_egress(std::vector<ItemMember>& members, const std::string& item_resolver, bool weaken_none);

// Builds and starts everything; fills sb.handle. Throws InfraError naming the control or
// step that failed; the caller then calls teardown_sandbox.
void launch_sandbox(DeployedSandbox& sb, const SandboxSpec& spec, const NodeClass& node_class,
                    const std::string& node_class_name, const std::string& authorized_key,
                    const LaunchContext& ctx);

// Builds and starts a sibling service: its own namespace and egress chain like any
// sandbox, the service's own security context, and `isoprobe serve` (the bundle mounted
// read-only at kSiblingProbeDir) as its process instead of sshd. Fills sb.handle.facts
// with what the harness needs to probe it (address, mode, how to exec into it).
void launch_sibling(DeployedSandbox& sb, const SandboxSpec& spec, const NodeClass& node_class,
                    const std::string& probe_bundle, const LaunchContext& ctx);

// The runtime's exec command for the sandbox's container, without the command itself.
std::vector<std::string> exec_prefix(const DeployedSandbox& sb, const RunPaths& paths);

// Removes whatever of the sandbox exists. Never throws.
void teardown_sandbox(DeployedSandbox& sb, const LaunchContext& ctx) noexcept;

}  // namespace isoharness::deploy::local
