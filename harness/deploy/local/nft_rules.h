// Egress policy as nftables scripts for the node namespace (and the jumphost's own
// filter). Pure text: the caller feeds it to `nft -f -` inside the namespace.
//
// Node forward chain (policy drop): replies to established flows pass; the jumphost may
// open tcp/2222 on a sandbox address; a packet from a sandbox's veth jumps to that
// sandbox's chain through the verdict map `from_sandbox`, keyed by the veth's name, so a
// sandbox that holds NET_ADMIN and changes its own address gains nothing. A sandbox chain
// drops spoofed sources, drops the in-cluster ranges that egress never opens, then
// accepts exactly what allowDomains (addresses + DNS to the world resolver) and allowCIDR
// open, and drops the rest. Every drop of the sandbox's own traffic (the in-cluster ranges
// and the rest) goes through its chain `sb_<i>_stop`, which counts the packet in the set
// drop_set_name(i, 4 or 6) under its destination, transport and port: the drop point's
// record that an attempt left the sandbox and was stopped (drop_point.h reads it). The
// first SSH connection from the jumphost to each sandbox address is noted in kFirstSshSet.
//
// Services of one item (siblings, each its own sandbox) reach each other: a member's chain
// accepts its peers' addresses and the item's own resolver before the in-cluster drops.
// allowDomains opens a listed name on TCP 80 and 443 only, and only for requests that
// carry that name, as the chart's Cilium policy does: the node's nat chain `proxy_nat`
// DNATs a sandbox's new TCP 80/443 connections to its listed addresses (`proxied`, those
// no allowCIDR covers) to the name proxy on kNodeJumpSide:kNameProxyPort
// (tools/name_proxy.cc), which forwards them only when the TLS server name or HTTP Host
// matches the sandbox's patterns (its rules file, name_proxy_rules below) and resets them
// otherwise. The forward chain opens no other port to a listed address, and UDP never.
// The proxy opens its upstream connection from the sandbox's address (IP_TRANSPARENT):
// the chain `proxy_reply` marks replies to such sockets and the node routes marked
// packets to itself (ip rule fwmark kProxyMark, table kProxyTable), so the world and its
// witness see the sandbox as the source. The same path serves runc and runsc sandboxes:
// it acts on packets leaving the sandbox's veth, whatever network stack sent them.
//
// A `networkIsolated: true` (network_mode none) member has no peers, no resolver and no egress, is nobody's
// peer, and its address is in the set `sealed`, which the forward chain drops before anything else may open a
// flow to it (the jumphost's tcp/2222 included): deny-all both ways.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isoharness::deploy::local {

// A port allowDomainsPorts opens on one listed address: TCP, UDP or both ("tcp", "udp",
// "any"), no name checked (the chart pins it to the domain's addresses and nothing else).
struct AddressPort {
  std::string address;
  std::string protocol;  // "tcp", "udp" or "any"
  int port = 0;
  bool operator==(const AddressPort&) const = default;
};

struct SandboxEgress {
  int index = 0;                              // the sandbox's index in its world
  std::string veth;                           // node-side interface name, e.g. "sb3"
  std::string address;                        // the sandbox's own address
  bool dns = false;                           // may query the world resolver
  std::vector<std::string> addresses;         // opened by allowDomains
  std::vector<std::string> cidrs;             // opened by allowCIDR (and "everything")
  std::vector<std::string> peers;             // sibling services of the same item it may reach
  std::string item_resolver;                  // the item's own resolver (udp/tcp 53); empty = none
  bool sealed = false;                        // networkIsolated: no flow in from anywhere
  std::vector<std::string> weakened_accepts;  // selftest only (weakenings.h): accepted first
  std::string address6;                       // its IPv6 address ("" = no IPv6, every v6 packet dropped)
  std::vector<std::string> cidrs6;            // IPv6 ranges opened ("everything": the world's v6 internet)
  std::vector<std::string> name_patterns;     // allowDomains patterns the name proxy checks
  std::vector<std::string> proxied;           // listed addresses whose TCP 80/443 go to the proxy
  std::vector<AddressPort> domain_ports;      // allowDomainsPorts, on the listed addresses
  // Selftest only (weakenings.h): listed addresses open on every port and protocol; the
  // proxy forwards TLS / HTTP without checking the name.
  bool domains_any_port = false;
  bool proxy_skips_sni = false;
  bool proxy_skips_host = false;
};

// A platform's own ingress rule over every sandbox of the world, as a stand-in platform
// writes it (docs/CONTRACTS.md §4.5): none; TCP 2222 of every sandbox open from every
// entity (a per-sample rule for the human baseliner's sshd, `fromEntities: [all]`); or every
// port of every sandbox open to ingress (an ingress "deny" written `ingress: - {}`, which
// allows all). Accepted in the forward chain after the `sealed` drop, so a networkIsolated
// sandbox stays closed, and before any sandbox's own chain.
enum class PlatformIngress { none, ssh_from_all, allow_all };
// "none", "tcp-2222-from-all", "allow-all"; parse: nullopt for any other word.
std::string_view platform_ingress_name(PlatformIngress p);
std::optional<PlatformIngress> parse_platform_ingress(std::string_view word);

inline constexpr int kProxyMark = 1;
inline constexpr int kProxyTable = 100;

// The TCP port the probe tries on a listed domain as one allowDomainsPorts does not list,
// given the ports the list opens on TCP (TCP or ANY entries): kUnlistedDomainPort, or the
// first port after it no entry opens (never 22, 80 or 443, the domain's own probes). It
// does not depend on what else is listed, so the probe (local_backend.cc, judged against the
// plan) and the selftest weakening that opens one more port (weakenings.h, on the weakened
// values) name the same port.
inline constexpr int kUnlistedDomainPort = 8444;
int unlisted_domain_port(const std::vector<int>& tcp_ports);

// The sandbox's rules file for the name proxy (tools/name_proxy.h), named after its address.
std::string name_proxy_rules(const SandboxEgress& e);

// The table name for a run: "ih_<runid>".
std::string nft_table_name(const std::string& run_id);

// The node namespace's table (created once per world).
std::string node_ruleset(const std::string& run_id, const std::string& jump_iface,
                         PlatformIngress ingress = PlatformIngress::none);

// The jumphost namespace's table: sshd on 22 from the host link (and the link relay's port,
// when relay_port is not 0: world.h), out only to sandboxes' 2222.
std::string jumphost_ruleset(const std::string& run_id, const std::string& host_iface, int relay_port = 0);

// A lossy host link (the profile's jumphost_link.loss_percent): a second table in the
// jumphost namespace dropping each packet that crosses host_iface, in either direction,
// with probability permyriad / 10000 (nft `numgen random`).
std::string link_loss_ruleset(const std::string& run_id, const std::string& host_iface, int permyriad);

// The host (root namespace) guard, one table per run, named like the node's: the world's
// ranges (world_ranges(): 203.0.113.0/24, 198.51.100.0/24, 169.254.169.254) may leave
// the host only through a world's host link ("ih-*"). Should a world be gone while something still
// sends to its jumphost, the packet is dropped here instead of following the default
// route off the machine. 192.0.2.0/24 is not in the list: the host may have real
// neighbours there, and the host never sends to it (the sandboxes' range is only reached
// inside the node namespace).
std::string host_guard_ruleset(const std::string& run_id);

// The drop point's per-sandbox set of dropped destinations, family 4 or 6, and its bound.
// Its elements live kDropSetTimeoutS after their last drop (each drop restarts the timeout:
// the time of the last drop is the listing's time less (timeout - expires)).
inline constexpr int kDropSetSize = 1024;
inline constexpr int kDropSetTimeoutS = 86400;
std::string drop_set_name(int index, int family);

// The node's set of sandbox addresses the jumphost opened SSH to, each added at the first
// such connection (`add` keeps its timeout, kDropSetTimeoutS, running from then): when the
// sandbox was first reached, which the stand-in platform's flows show (tests/hawk_standin).
inline constexpr const char* kFirstSshSet = "jump_ssh_first";

// Adds / removes one sandbox's chain, its drop point and its verdict-map entry.
std::string sandbox_egress_add(const std::string& run_id, const SandboxEgress& e);
std::string sandbox_egress_remove(const std::string& run_id, const SandboxEgress& e);

}  // namespace isoharness::deploy::local
