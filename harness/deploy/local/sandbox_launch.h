// One sandbox's life on this machine: its namespace and veth, its egress chain in the
// node, its bundle (image + config.json), the runc/runsc container running sshd, and the
// noisy neighbour of its node class. Internal to the local backend.
#pragma once

#include <sys/types.h>

#include <string>

#include <nlohmann/json.hpp>

#include "harness/deploy/backend.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/run_state.h"
#include "harness/deploy/local/sandbox_spec.h"

namespace isoharness::deploy::local {

class World;

struct DeployedSandbox {
  std::string name;
  int index = -1;
  std::string runtime;       // "runc" / "runsc"
  std::string runtime_bin;
  std::string container;     // container id
  std::string netns;
  std::string address;
  std::string dir;           // bundle and logs
  SandboxEgress egress;
  std::vector<std::string> weakenings;  // selftest only (weakenings.h)
  std::string weakened_shared_dir;      // where oci:reused-home keeps the home directory
  pid_t noise_pid = -1;
  // What exists, so teardown removes exactly that.
  bool netns_created = false;
  bool veth_created = false;  // the node-side end, egress.veth
  bool egress_added = false;
  bool container_started = false;
  SandboxHandle handle;
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
SandboxEgress egress_for(const SandboxSpec& spec, int index, const std::string& veth, const std::string& address);

// Builds and starts everything; fills sb.handle. Throws InfraError naming the control or
// step that failed; the caller then calls teardown_sandbox.
void launch_sandbox(DeployedSandbox& sb, const SandboxSpec& spec, const NodeClass& node_class,
                    const std::string& node_class_name, const std::string& authorized_key, const LaunchContext& ctx);

// Removes whatever of the sandbox exists. Never throws.
void teardown_sandbox(DeployedSandbox& sb, const LaunchContext& ctx) noexcept;

}  // namespace isoharness::deploy::local
