// The local world's address plan. Every address lives inside the documentation ranges
// (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) or is 169.254.169.254 on a world host;
// nothing else is ever configured or routed.
//
//   host  <-> jumphost   198.51.100.(128+4k)/30 (k = the world's slot, 0..31): host +1,
//                        jumphost +2. Not in 192.0.2.0/24: on machines like this one the
//                        host's own uplink may already use that range.
//   jump  <-> node       192.0.2.128/30: node .129, jumphost .130
//   node  <-> sandbox i  sandbox 192.0.2.(193+i)/32, gateway 192.0.2.129 (on-link)
//   node  <-> world      203.0.113.0/30: node .1, world .2; node routes the world's
//                        ranges (203.0.113.0/24, 198.51.100.0/24, 169.254.169.254) via .2
//   world services       target 203.0.113.10, blocked .20, cluster API .30, resolver .53,
//                        metadata 169.254.169.254, a CIDR host 198.51.100.10
//   IPv6 (documentation prefix 2001:db8::/32 only): node <-> world 2001:db8:0:1::/64
//                        (node ::1, world ::2); sandbox i 2001:db8:0:2::(193+i)/128, gateway
//                        fe80::1 on its veth; the world's internet 2001:db8:100::/48: canary
//                        ::40, cluster API ::30, a metadata stand-in ::254. The jumphost and
//                        the host link stay IPv4 only.
//   witness              canary host 203.0.113.40 (no name, no list opens it but "everything"),
//                        the canary zone's authoritative server 203.0.113.41; the witness
//                        records what enters the world namespace (witness_log.h)
//
// Only the host <-> jumphost link lives (half) in the host's root namespace, so only it is
// allocated per world, by scanning the root namespace's addresses for a free /30.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isoharness::deploy::local {

struct Cidr {
  std::uint32_t address = 0;  // host byte order, masked to the prefix
  int prefix = 32;
  bool contains(std::uint32_t ip) const;
  bool overlaps(const Cidr& other) const;
  std::string to_string() const;
};

// "a.b.c.d" -> host-order address. nullopt unless exactly four decimal octets.
std::optional<std::uint32_t> parse_ipv4(std::string_view text);
std::string format_ipv4(std::uint32_t address);
// "a.b.c.d/n" (or a bare address = /32). The host bits must be zero.
std::optional<Cidr> parse_cidr(std::string_view text);

inline constexpr int kMaxWorldSlots = 32;
inline constexpr int kMaxSandboxes = 62;

struct HostLink {
  int slot = 0;
  std::string host_address;  // in the root namespace
  std::string jump_address;  // the jumphost's sshd listens here
  std::string cidr;          // the /30
};
HostLink host_link(int slot);

// The lowest slot whose /30 overlaps none of `used` (addresses and routes already present
// in the root namespace) and is not in `taken` (slots recorded by other worlds).
std::optional<int> free_world_slot(const std::vector<Cidr>& used, const std::vector<int>& taken);

// Sandbox i (0-based) of a world.
std::string sandbox_address(int index);
// The own resolver of the item attempt whose agent sandbox is i: 203.0.113.(64+i), in
// the world namespace.
std::string item_resolver_address(int index);

// The world's fixed addresses.
namespace world_addr {
inline constexpr const char* kNodeJumpSide = "192.0.2.129";
inline constexpr const char* kJumpNodeSide = "192.0.2.130";
inline constexpr const char* kSandboxRange = "192.0.2.192/26";
inline constexpr const char* kNodeWorldSide = "203.0.113.1";
inline constexpr const char* kWorldNodeSide = "203.0.113.2";
inline constexpr const char* kTarget = "203.0.113.10";
inline constexpr const char* kBlocked = "203.0.113.20";
inline constexpr const char* kClusterApi = "203.0.113.30";
inline constexpr const char* kResolver = "203.0.113.53";
inline constexpr const char* kMetadata = "169.254.169.254";
inline constexpr const char* kCidrHost = "198.51.100.10";
inline constexpr const char* kCanary = "203.0.113.40";
inline constexpr const char* kCanaryDns = "203.0.113.41";
// The name-checking proxy's port on the node (kNodeJumpSide): where nft sends a
// sandbox's TCP 80/443 to an allow-listed address (tools/name_proxy.cc).
inline constexpr int kNameProxyPort = 15080;
// IPv6 (inet_ntop's canonical form: the witness logs addresses so).
inline constexpr const char* kNodeWorldSide6 = "2001:db8:0:1::1";
inline constexpr const char* kWorldNodeSide6 = "2001:db8:0:1::2";
inline constexpr const char* kSandboxRange6 = "2001:db8:0:2::/64";
inline constexpr const char* kSandboxGateway6 = "fe80::1";
inline constexpr const char* kInternet6 = "2001:db8:100::/48";
inline constexpr const char* kCanary6 = "2001:db8:100::40";
inline constexpr const char* kClusterApi6 = "2001:db8:100::30";
inline constexpr const char* kMetadata6 = "2001:db8:100::254";
}  // namespace world_addr

// The CIDR host's port beside 80: open only through allowCIDR (every port), never through
// a domain.
inline constexpr int kCidrHostExtraPort = 8443;

// Sandbox i's IPv6 address (2001:db8:0:2::(193+i)).
std::string sandbox_address6(int index);
// IPv6 ranges egress policy never opens (the node link and sandboxes, cluster API, metadata).
std::vector<std::string> never_opened_ranges6();

// The canary zone: the witness answers every name in it (with kCanary) and logs the query.
// An item resolver forwards it there only when the item's policy lets names out
// (witness_zone_forwarded); a query for `ihw-<nonce>.<zone>` that reaches the witness is
// data that left through DNS.
inline constexpr const char* kWitnessZone = "witness.example.org";
// A name in the zone, standing for every name in it when the policy's patterns are matched.
inline constexpr const char* kWitnessZoneProbeName = "probe.witness.example.org";
// Where the jumphost serves the witness's log over HTTP, on its host-link address only (an
// operator-run witness's stand-in for the hawk backend; the host guard and the jumphost's
// filter open it from the host alone): http://<jump address>:kWitnessLogPort/kWitnessLogPath.
inline constexpr int kWitnessLogPort = 8053;
inline constexpr const char* kWitnessLogPath = "/witness.log";
// The token the log server MACs its lines with (deploy/witness_wire.h): the file this
// environment variable names when set (the token an operator shares with the harness's
// profile, witness.log.token_file), else a random one in the world's directory.
inline constexpr const char* kWitnessKeyEnv = "ISOHARNESS_WITNESS_KEY_FILE";
// Whether allowDomains patterns open names in the canary zone ("*", "*.example.org", ...).
bool witness_zone_forwarded(const std::vector<std::string>& patterns);

// Names the world's resolver answers, with their addresses.
struct WorldName {
  std::string name;
  std::string address;
  bool in_cluster;  // never opened by allowDomains/allowCIDR (cluster API, metadata)
};
const std::vector<WorldName>& world_names();

// The addresses allowDomains opens: every world name matching a pattern ("a.b" exactly,
// "*.b" any name below b, "*" every internet name). In-cluster names never match.
std::vector<std::string> resolve_allowed_domains(const std::vector<std::string>& patterns);

// Ranges that egress policy never opens, whatever allowCIDR says: other sandboxes, the
// jumphost and node, the cluster API and the metadata endpoint.
std::vector<std::string> never_opened_ranges();

// What "everything" (allowDomains ["*"], allowCIDR 0.0.0.0/0, a task's bridge, allowEntities [world]) means
// in a world that has no internet: the world's internet ranges.
std::vector<std::string> world_internet_ranges();

// Everything the world namespace answers for: its internet ranges and the metadata
// address. The node routes exactly these to the world, and the host guard lets them
// leave the host only through a world's host link.
std::vector<std::string> world_ranges();

}  // namespace isoharness::deploy::local
