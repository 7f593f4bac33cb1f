// Egress policy as nftables scripts for the node namespace (and the jumphost's own
// filter). Pure text: the caller feeds it to `nft -f -` inside the namespace.
//
// Node forward chain (policy drop): replies to established flows pass; the jumphost may
// open tcp/2222 on a sandbox address; a packet from a sandbox's veth jumps to that
// sandbox's chain through the verdict map `from_sandbox`, keyed by the veth's name, so a
// sandbox that holds NET_ADMIN and changes its own address gains nothing. A sandbox chain
// drops spoofed sources, drops the in-cluster ranges that egress never opens, then
// accepts exactly what allowDomains (addresses + DNS to the world resolver) and allowCIDR
// open, and drops the rest.
#pragma once

#include <string>
#include <vector>

namespace isoharness::deploy::local {

struct SandboxEgress {
  int index = 0;                         // the sandbox's index in its world
  std::string veth;                      // node-side interface name, e.g. "sb3"
  std::string address;                   // the sandbox's own address
  bool dns = false;                      // may query the world resolver
  std::vector<std::string> addresses;    // opened by allowDomains
  std::vector<std::string> cidrs;        // opened by allowCIDR (and "everything")
};

// The table name for a run: "ih_<runid>".
std::string nft_table_name(const std::string& run_id);

// The node namespace's table (created once per world).
std::string node_ruleset(const std::string& run_id, const std::string& jump_iface);

// The jumphost namespace's table: sshd on 22 from the host link, out only to sandboxes' 2222.
std::string jumphost_ruleset(const std::string& run_id, const std::string& host_iface);

// Adds / removes one sandbox's chain and its verdict-map entry.
std::string sandbox_egress_add(const std::string& run_id, const SandboxEgress& e);
std::string sandbox_egress_remove(const std::string& run_id, const SandboxEgress& e);

}  // namespace isoharness::deploy::local
