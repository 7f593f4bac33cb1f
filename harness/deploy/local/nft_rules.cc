#include "harness/deploy/local/nft_rules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "harness/deploy/local/address_plan.h"

namespace isoharness::deploy::local {
namespace {

std::string chain_of(const SandboxEgress& e) {
  return "sb_" + std::to_string(e.index);
}

std::string drop_chain_of(const SandboxEgress& e) {
  return chain_of(e) + "_stop";
}

// The drop point's record of one sandbox: every packet its chain drops is counted under its
// destination, transport and port (0 for ICMP) in a per-family set that keeps a counter per
// element. `update` restarts the element's timeout at each drop, so its `expires` tells when
// its last drop happened. Bounded: once a set holds kDropSetSize elements, later
// destinations fall to the chain's last rule, still dropped and counted there, only not per
// destination.
std::string drop_point_add(const std::string& t, const SandboxEgress& e) {
  const std::string size = std::to_string(kDropSetSize);
  const std::string d4 = drop_set_name(e.index, 4), d6 = drop_set_name(e.index, 6);
  const std::string flags =
      "; flags dynamic,timeout; timeout " + std::to_string(kDropSetTimeoutS) + "s; counter; }\n";
  std::string s =
      "add set " + t + " " + d4 + " { type ipv4_addr . inet_proto . inet_service; size " + size + flags;
  s += "add set " + t + " " + d6 + " { type ipv6_addr . inet_proto . inet_service; size " + size + flags;
  const std::string c = drop_chain_of(e);
  const std::string rule = "add rule " + t + " " + c + " ";
  s += "add chain " + t + " " + c + "\n";
  s += rule + "meta nfproto ipv4 meta l4proto icmp update @" + d4 + " { ip daddr . meta l4proto . 0 } drop\n";
  s += rule + "meta nfproto ipv4 update @" + d4 + " { ip daddr . meta l4proto . th dport } drop\n";
  s += rule + "meta nfproto ipv6 meta l4proto ipv6-icmp update @" + d6 +
       " { ip6 daddr . meta l4proto . 0 } drop\n";
  s += rule + "meta nfproto ipv6 update @" + d6 + " { ip6 daddr . meta l4proto . th dport } drop\n";
  return s + rule + "counter drop\n";
}

// The platform's ingress rule (nft_rules.h), in the forward chain.
std::string platform_ingress_rules(PlatformIngress ingress) {
  const std::string v4 = std::string("    ip daddr ") + world_addr::kSandboxRange;
  const std::string v6 = std::string("    ip6 daddr ") + world_addr::kSandboxRange6;
  switch (ingress) {
    case PlatformIngress::none:
      return "";
    case PlatformIngress::ssh_from_all:
      return v4 + " tcp dport 2222 ct state new accept\n" + v6 + " tcp dport 2222 ct state new accept\n";
    case PlatformIngress::allow_all:
      return v4 + " ct state new accept\n" + v6 + " ct state new accept\n";
  }
  return "";
}

}  // namespace

std::string_view platform_ingress_name(PlatformIngress p) {
  switch (p) {
    case PlatformIngress::none:
      return "none";
    case PlatformIngress::ssh_from_all:
      return "tcp-2222-from-all";
    case PlatformIngress::allow_all:
      return "allow-all";
  }
  return "none";
}

std::optional<PlatformIngress> parse_platform_ingress(std::string_view word) {
  for (auto p : {PlatformIngress::none, PlatformIngress::ssh_from_all, PlatformIngress::allow_all})
    if (platform_ingress_name(p) == word) return p;
  return std::nullopt;
}

std::string drop_set_name(int index, int family) {
  return "sb_" + std::to_string(index) + "_dropped" + std::to_string(family);
}

std::string nft_table_name(const std::string& run_id) {
  return "ih_" + run_id;
}

std::string node_ruleset(const std::string& run_id, const std::string& jump_iface, PlatformIngress ingress) {
  const std::string t = nft_table_name(run_id);
  std::string s;
  s += "table inet " + t + " {\n";
  s += "  map from_sandbox { type ifname : verdict; }\n";
  s += "  map proxy_from_sandbox { type ifname : verdict; }\n";
  s += "  set sealed { type ipv4_addr; }\n";
  s += "  set " + std::string(kFirstSshSet) + " { type ipv4_addr; size 256; flags dynamic,timeout; timeout " +
       std::to_string(kDropSetTimeoutS) + "s; }\n";
  s += "  chain input {\n    type filter hook input priority 0; policy drop;\n";
  s += "    iif \"lo\" accept\n    ct state established,related accept\n";
  // IPv6 neighbour discovery with the sandboxes and the world (their gateway is the node).
  s += "    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept\n";
  // The name proxy, reached only through proxy_nat's DNAT (a sandbox cannot address it).
  s += "    ip daddr " + std::string(world_addr::kNodeJumpSide) + " tcp dport " +
       std::to_string(world_addr::kNameProxyPort) + " ct status dnat accept\n  }\n";
  s += "  chain proxy_nat {\n    type nat hook prerouting priority -100; policy accept;\n";
  s += "    iifname vmap @proxy_from_sandbox\n  }\n";
  s += "  chain proxy_reply {\n    type filter hook prerouting priority -150; policy accept;\n";
  s += "    iifname \"to-world\" meta l4proto tcp socket transparent 1 meta mark set " +
       std::to_string(kProxyMark) + "\n  }\n";
  s += "  chain forward {\n    type filter hook forward priority 0; policy drop;\n";
  s += "    ct state established,related accept\n    ct state invalid drop\n";
  s += "    ip daddr @sealed counter drop\n";
  const std::string ssh_in = "    iifname \"" + jump_iface + "\" ip saddr " + world_addr::kJumpNodeSide +
                             " ip daddr " + world_addr::kSandboxRange + " tcp dport 2222 ct state new";
  // A rule of its own: should the set be full, the add fails and only this rule ends.
  s += ssh_in + " add @" + kFirstSshSet + " { ip daddr }\n";
  s += ssh_in + " accept\n";
  s += platform_ingress_rules(ingress);
  s += "    iifname vmap @from_sandbox\n";
  s += "  }\n}\n";
  return s;
}

std::string jumphost_ruleset(const std::string& run_id, const std::string& host_iface, int relay_port) {
  const std::string t = nft_table_name(run_id);
  std::string s;
  s += "table inet " + t + " {\n";
  s += "  chain input {\n    type filter hook input priority 0; policy drop;\n";
  s += "    iif \"lo\" accept\n    ct state established,related accept\n";
  s += "    iifname \"" + host_iface + "\" tcp dport 22 ct state new accept\n";
  // The witness log server (address_plan.h), from the host side only.
  s += "    iifname \"" + host_iface + "\" tcp dport " + std::to_string(kWitnessLogPort) +
       " ct state new accept\n";
  if (relay_port > 0)
    s += "    iifname \"" + host_iface + "\" tcp dport " + std::to_string(relay_port) +
         " ct state new accept\n";
  s += "  }\n";
  s += "  chain output {\n    type filter hook output priority 0; policy drop;\n";
  s += "    oif \"lo\" accept\n    ct state established,related accept\n";
  s +=
      "    ip daddr " + std::string(world_addr::kSandboxRange) + " tcp dport 2222 ct state new accept\n  }\n";
  s += "  chain forward {\n    type filter hook forward priority 0; policy drop;\n  }\n}\n";
  return s;
}

std::string link_loss_ruleset(const std::string& run_id, const std::string& host_iface, int permyriad) {
  const std::string drop = " numgen random mod 10000 < " + std::to_string(permyriad) + " drop\n";
  std::string s = "table inet " + nft_table_name(run_id) + "_link {\n";
  s += "  chain in {\n    type filter hook prerouting priority -300; policy accept;\n";
  s += "    iifname \"" + host_iface + "\"" + drop + "  }\n";
  s += "  chain out {\n    type filter hook postrouting priority 300; policy accept;\n";
  s += "    oifname \"" + host_iface + "\"" + drop + "  }\n}\n";
  return s;
}

std::string host_guard_ruleset(const std::string& run_id) {
  std::string s = "table inet " + nft_table_name(run_id) + " {\n";
  s += "  chain guard_out {\n    type filter hook output priority 0; policy accept;\n";
  s += "    oifname \"ih-*\" accept\n";
  const std::string ranges = fmt::format("{}", fmt::join(world_ranges(), ", "));
  s += "    ip daddr { " + ranges + " } counter drop\n";
  s += "    ip6 daddr " + std::string(world_addr::kInternet6) + " counter drop\n  }\n}\n";
  return s;
}

std::string sandbox_egress_add(const std::string& run_id, const SandboxEgress& e) {
  const std::string t = "inet " + nft_table_name(run_id);
  const std::string c = chain_of(e);
  const std::string rule = "add rule " + t + " " + c + " ";
  std::string s = drop_point_add(t, e);
  const std::string stop = " goto " + drop_chain_of(e) + "\n";
  s += "add chain " + t + " " + c + "\n";
  s += rule + "ip saddr != " + e.address + " drop\n";
  // IPv6: only from its own address, and only what the policy opens below.
  s += rule + (e.address6.empty() ? "meta nfproto ipv6 drop\n" : "ip6 saddr != " + e.address6 + " drop\n");
  for (const auto& peer : e.peers) s += rule + "ip daddr " + peer + " accept\n";
  if (!e.item_resolver.empty()) {
    s += rule + "ip daddr " + e.item_resolver + " udp dport 53 accept\n";
    s += rule + "ip daddr " + e.item_resolver + " tcp dport 53 accept\n";
  }
  for (const auto& w : e.weakened_accepts) s += rule + w + " accept\n";
  for (const auto& r : never_opened_ranges()) s += rule + "ip daddr " + r + stop;
  for (const auto& r : never_opened_ranges6()) s += rule + "ip6 daddr " + r + stop;
  if (e.dns) {
    s += rule + "ip daddr " + world_addr::kResolver + " udp dport 53 accept\n";
    s += rule + "ip daddr " + world_addr::kResolver + " tcp dport 53 accept\n";
  }
  // A listed address: 80/443 went to the name proxy (proxy_nat); only what allowDomainsPorts
  // lists is open beside them, on that transport and port, with no name check.
  for (const auto& d : e.domain_ports) {
    const std::string l4 =
        d.protocol == "tcp" || d.protocol == "udp" ? d.protocol : "meta l4proto { tcp, udp } th";
    s += rule + "ip daddr " + d.address + " " + l4 + " dport " + std::to_string(d.port) + " accept\n";
  }
  if (e.domains_any_port)
    for (const auto& a : e.addresses) s += rule + "ip daddr " + a + " accept\n";
  for (const auto& cidr : e.cidrs) s += rule + "ip daddr " + cidr + " accept\n";
  for (const auto& cidr : e.cidrs6) s += rule + "ip6 daddr " + cidr + " accept\n";
  s += rule + "goto " + drop_chain_of(e) + "\n";
  s += "add element " + t + " from_sandbox { \"" + e.veth + "\" : jump " + c + " }\n";
  s += "add chain " + t + " px_" + std::to_string(e.index) + "\n";
  if (!e.proxied.empty()) {
    const std::string set = fmt::format("{}", fmt::join(e.proxied, ", "));
    s += "add rule " + t + " px_" + std::to_string(e.index) + " ip saddr " + e.address + " ip daddr { " +
         set + " } tcp dport { 80, 443 } ct state new dnat ip to " + world_addr::kNodeJumpSide + ":" +
         std::to_string(world_addr::kNameProxyPort) + "\n";
  }
  s += "add element " + t + " proxy_from_sandbox { \"" + e.veth + "\" : jump px_" + std::to_string(e.index) +
       " }\n";
  if (e.sealed) s += "add element " + t + " sealed { " + e.address + " }\n";
  return s;
}

std::string sandbox_egress_remove(const std::string& run_id, const SandboxEgress& e) {
  const std::string t = "inet " + nft_table_name(run_id);
  std::string s = "delete element " + t + " from_sandbox { \"" + e.veth + "\" }\n";
  s += "delete element " + t + " proxy_from_sandbox { \"" + e.veth + "\" }\n";
  s += "flush chain " + t + " px_" + std::to_string(e.index) + "\n" + "delete chain " + t + " px_" +
       std::to_string(e.index) + "\n";
  if (e.sealed) s += "delete element " + t + " sealed { " + e.address + " }\n";
  s += "flush chain " + t + " " + chain_of(e) + "\n" + "delete chain " + t + " " + chain_of(e) + "\n";
  s += "flush chain " + t + " " + drop_chain_of(e) + "\n" + "delete chain " + t + " " + drop_chain_of(e) +
       "\n";
  for (int family : {4, 6}) s += "delete set " + t + " " + drop_set_name(e.index, family) + "\n";
  return s;
}

int unlisted_domain_port(const std::vector<int>& tcp_ports) {
  for (int step = 0; step < 65535; ++step) {
    const int p = (kUnlistedDomainPort - 1 + step) % 65535 + 1;  // 8444 .. 65535, then 1 .. 8443
    if (p == 22 || p == 80 || p == 443) continue;
    if (std::find(tcp_ports.begin(), tcp_ports.end(), p) == tcp_ports.end()) return p;
  }
  return kUnlistedDomainPort;  // every port listed: unreachable in practice
}

std::string name_proxy_rules(const SandboxEgress& e) {
  std::string s;
  for (const auto& p : e.name_patterns) s += "allow " + p + "\n";
  if (e.proxy_skips_sni) s += "skip-sni\n";
  if (e.proxy_skips_host) s += "skip-host\n";
  return s;
}

}  // namespace isoharness::deploy::local
