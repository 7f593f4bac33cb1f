// The network world one backend instance shares between its sandboxes: a node namespace
// that routes and enforces egress, a jumphost namespace whose OpenSSH sshd (in a runc
// container, keys only, forwarding only to sandboxes' port 2222) is the only thing the
// host can reach, and a world namespace standing in for the internet (dnsmasq for the
// scenario's names; small servers for target, blocked, cluster API, metadata and a CIDR
// host). See README.md in this folder for the address plan.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <vector>

#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/run_state.h"

namespace isoharness::deploy::local {

struct WorldOptions {
  std::string helper_path;     // isoharness-world-helper
  std::string seccomp_profile; // containers' default profile (for the jumphost container)
  std::string kernel_release;
};

class World {
 public:
  // Builds the world; on failure removes what it made and throws InfraError.
  World(const RunPaths& paths, const WorldOptions& options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const HostLink& host_link() const { return link_; }
  const std::string& jump_host_key() const { return jump_host_key_; }  // "ssh-ed25519 AAAA..."
  static constexpr const char* kJumpUser = "jump";

  std::string node_ns() const { return netns_name(paths_.run_id, "node"); }
  std::string jump_ns() const { return netns_name(paths_.run_id, "jump"); }
  std::string world_ns() const { return netns_name(paths_.run_id, "world"); }

  // Lets this key log in to the jumphost (idempotent, thread-safe).
  void authorize(const std::string& key_line);

  // Waits until an SSH server answers on addr:port as seen from the jumphost.
  void wait_ssh_from_jumphost(const std::string& addr, int port, int deadline_ms) const;

 private:
  void build();
  void allocate_slot();
  void build_namespaces();
  void start_world_services();
  void start_jumphost();
  void teardown() noexcept;
  pid_t spawn_in(const std::string& ns, const std::vector<std::string>& argv, const std::string& log,
                 const std::string& what);

  RunPaths paths_;
  WorldOptions options_;
  HostLink link_;
  std::string jump_host_key_;
  std::vector<pid_t> children_;
  std::mutex keys_mutex_;
};

}  // namespace isoharness::deploy::local
