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
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/run_state.h"

namespace isoharness::deploy::local {

// One item attempt's own resolver: a dnsmasq in the world namespace on its own address,
// answering the item's service names (and the world's names when the item may resolve
// them), with no upstream. `instance` is an address in 127.0.0.0/8 drawn for this resolver
// alone, answered for kResolverInstanceName: a sandbox that reads another attempt's
// instance is looking at a resolver (or a cache) that outlived its attempt.
struct ItemResolver {
  std::string address;
  std::string instance;
  pid_t pid = -1;
  std::string config_path;
};
inline constexpr const char* kResolverInstanceName = "instance.resolver.isoharness.internal";

// The host <-> jumphost link as a far deployment's (the profile's `jumphost_link`): a round
// trip added by the world's link relay (tools/relay.cc, in the jumphost namespace: the
// harness's jumphost connections go through it, held rtt/2 each way), and a share of
// packets lost each way (nftables). One mechanism on every kernel: no tc netem.
struct LinkShape {
  int rtt_ms = 0;
  double loss_percent = 0;
};
// What an item resolver sends on to the witness's canary zone server (address_plan.h):
// nothing, the canary zone (the item's policy lets names out), or every name it does not
// answer itself (the selftest weakening dns:forward-every-name).
enum class ResolverForwarding { none, witness_zone, every_name };

struct WorldOptions {
  std::string helper_path;      // isoharness-world-helper
  std::string seccomp_profile;  // containers' default profile (for the jumphost container)
  std::string kernel_release;
  LinkShape jumphost_link;
  PlatformIngress platform_ingress = PlatformIngress::none;  // nft_rules.h
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
  // Where the harness reaches the jumphost's sshd on jump_address: port 22, or the link
  // relay's port when the link has a round trip (jumphost_link.rtt_ms).
  static constexpr int kRelayPort = 2200;
  int jump_port() const { return options_.jumphost_link.rtt_ms > 0 ? kRelayPort : 22; }

  std::string node_ns() const { return netns_name(paths_.run_id, "node"); }
  std::string jump_ns() const { return netns_name(paths_.run_id, "jump"); }
  std::string world_ns() const { return netns_name(paths_.run_id, "world"); }

  // Lets this key log in to the jumphost (idempotent, thread-safe).
  void authorize(const std::string& key_line);

  // What the jumphost link was given (facts for the result).
  const LinkShape& jumphost_link() const { return options_.jumphost_link; }
  PlatformIngress platform_ingress() const { return options_.platform_ingress; }

  // Starts an item's resolver on `address` (203.0.113.0/24, not yet in use) answering
  // `names` (name -> IPv4). Throws InfraError when it does not start.
  ItemResolver start_item_resolver(const std::string& tag, const std::string& address,
                                   const std::vector<std::pair<std::string, std::string>>& names,
                                   ResolverForwarding forwarding = ResolverForwarding::none);
  // Stops it and removes its address. Never throws; idempotent.
  void stop_item_resolver(ItemResolver& resolver) noexcept;

  // A server in the world answering TCP on each address and port allowDomainsPorts opens
  // (tcp or any), as the listed name's own service would: one per address and port, started
  // at the first sandbox that lists it and kept until the world goes; a port the world's own
  // servers hold already is left to them. Thread-safe. Throws InfraError when one cannot start.
  void serve_domain_ports(const std::vector<AddressPort>& ports);

  // The outside witness's log (witness_log.h): one line per packet or query that arrived.
  std::string witness_log_path() const;
  // The file of the token the witness log server MACs its lines with (address_plan.h).
  std::string witness_key_file() const;

  // Where each sandbox's rules for the node's name proxy live, one file per sandbox
  // address (nft_rules.h, tools/name_proxy.h); its decisions are logged to name-proxy.log
  // beside it.
  std::string name_proxy_rules_dir() const { return paths_.world_dir() + "/name-proxy"; }
  // The name proxy's decision log (tools/name_proxy.cc): its record of each request it stopped.
  std::string name_proxy_decisions_path() const { return paths_.world_dir() + "/name-proxy-decisions.log"; }

  // Selftest's weakenings of the witness (weakenings.h): kill_witness ends it as a crash
  // would (its log stops, with no last line); restart_witness starts a new one appending to
  // the same log, so windows after its "ready" line are covered again. Both throw InfraError
  // when they cannot; neither is used by a run that is not weakened.
  void kill_witness();
  void restart_witness();

  // Waits until an SSH server answers on addr:port as seen from the jumphost.
  void wait_ssh_from_jumphost(const std::string& addr, int port, int deadline_ms) const;

 private:
  void build();
  void allocate_slot();
  void build_namespaces();
  void shape_jumphost_link();
  void build_ipv6_links();
  void start_world_services();
  void start_jumphost();
  void start_link_relay();
  pid_t start_witness();
  pid_t start_name_proxy();
  void teardown() noexcept;
  pid_t spawn_in(const std::string& ns, const std::vector<std::string>& argv, const std::string& log,
                 const std::string& what);

  RunPaths paths_;
  WorldOptions options_;
  HostLink link_;
  std::string jump_host_key_;
  std::vector<pid_t> children_;
  pid_t jump_adopter_ = -1;  // reaps the jumphost container's processes (run_detaching)
  pid_t witness_pid_ = -1;
  std::mutex keys_mutex_;
  std::mutex children_mutex_;
  std::mutex served_mutex_;
  std::vector<std::string> served_ports_;  // "address:port" of serve_domain_ports' servers
};

}  // namespace isoharness::deploy::local
