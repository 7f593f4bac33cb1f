// Unit tests of the local world's address plan, egress rules, sshd configurations and
// client files (pure text; the real nft/sshd run in tests/system/local_*).
#include <catch2/catch.hpp>
#include <tuple>

#include "harness/common/error.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/image_builder.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/run_state.h"
#include "harness/deploy/local/sandbox_launch.h"
#include "harness/deploy/local/sandbox_spec.h"
#include "harness/deploy/local/ssh_client_files.h"
#include "harness/deploy/local/sshd_config.h"
#include "harness/deploy/local/weakenings.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using namespace isoharness::deploy::local;
using nlohmann::json;

TEST_CASE("IPv4 addresses and CIDRs parse strictly", "[local]") {
  CHECK(parse_ipv4("192.0.2.1") == 0xC0000201u);
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.", "a.b.c.d", "1..2.3", "1.2.3.4 "})
    CHECK_FALSE(parse_ipv4(bad).has_value());
  auto c = parse_cidr("198.51.100.0/24");
  REQUIRE(c);
  CHECK(c->prefix == 24);
  CHECK(c->contains(*parse_ipv4("198.51.100.10")));
  CHECK_FALSE(c->contains(*parse_ipv4("198.51.101.10")));
  CHECK(parse_cidr("203.0.113.10")->prefix == 32);
  CHECK_FALSE(parse_cidr("198.51.100.1/24"));  // host bits set
  CHECK_FALSE(parse_cidr("198.51.100.0/33"));
  CHECK_FALSE(parse_cidr("198.51.100.0/"));
  CHECK(parse_cidr("0.0.0.0/0")->overlaps(*parse_cidr("192.0.2.0/24")));
}

TEST_CASE("a world's host link is a free /30 of 198.51.100.128/25", "[local]") {
  CHECK(host_link(0).host_address == "198.51.100.129");
  CHECK(host_link(0).jump_address == "198.51.100.130");
  CHECK(host_link(31).cidr == "198.51.100.252/30");
  std::vector<Cidr> used = {*parse_cidr("0.0.0.0/0"), *parse_cidr("192.0.2.0/24"),
                            *parse_cidr("198.51.100.129/32"), *parse_cidr("198.51.100.136/30")};
  CHECK(free_world_slot(used, {}) == 1);
  CHECK(free_world_slot(used, {1}) == 3);
  CHECK_FALSE(free_world_slot({*parse_cidr("198.51.100.0/24")}, {}).has_value());
  CHECK(sandbox_address(0) == "192.0.2.193");
  CHECK(parse_cidr(world_addr::kSandboxRange)->contains(*parse_ipv4(sandbox_address(kMaxSandboxes - 1))));
}

TEST_CASE("allowDomains opens the world addresses of the names, never in-cluster ones", "[local]") {
  CHECK(resolve_allowed_domains({"target.example.com"}) == std::vector<std::string>{"203.0.113.10"});
  auto wild = resolve_allowed_domains({"*.example.com"});
  CHECK(wild == std::vector<std::string>{"203.0.113.10", "203.0.113.20"});
  CHECK(resolve_allowed_domains({"kubernetes.default.svc", "metadata.google.internal"}).empty());
  CHECK(resolve_allowed_domains({"unknown.example.org"}).empty());
  auto everything = resolve_allowed_domains({"*"});
  CHECK(std::find(everything.begin(), everything.end(), "203.0.113.30") == everything.end());
}

TEST_CASE("egress follows the values: nothing by default, exactly what is named otherwise", "[local]") {
  json strict = {{"services", {{"default", {{"securityContext", {{"capabilities", {{"drop", {"ALL"}}}}}}}}}}};
  SandboxEgress e = egress_for(parse_sandbox_values(strict), 0, "sb0", "192.0.2.193");
  CHECK_FALSE(e.dns);
  CHECK(e.addresses.empty());
  CHECK(e.cidrs.empty());

  json domains = strict;
  domains["allowDomains"] = {"target.example.com"};
  e = egress_for(parse_sandbox_values(domains), 0, "sb0", "192.0.2.193");
  CHECK(e.dns);
  CHECK(e.addresses == std::vector<std::string>{"203.0.113.10"});

  json cidr = strict;
  cidr["allowCIDR"] = {"198.51.100.0/24"};
  e = egress_for(parse_sandbox_values(cidr), 0, "sb0", "192.0.2.193");
  CHECK_FALSE(e.dns);
  CHECK(e.cidrs == std::vector<std::string>{"198.51.100.0/24"});

  json none = domains;
  none["services"]["default"]["networkIsolated"] = true;
  e = egress_for(parse_sandbox_values(none), 0, "sb0", "192.0.2.193");
  CHECK(e.addresses.empty());
  CHECK_FALSE(e.dns);

  json all = strict;
  all["allowCIDR"] = {"0.0.0.0/0"};
  e = egress_for(parse_sandbox_values(all), 0, "sb0", "192.0.2.193");
  CHECK(e.dns);
  CHECK(e.cidrs == world_internet_ranges());
}

TEST_CASE("a platform's ingress rule: after the sealed drop, before every sandbox's own chain", "[local]") {
  const std::string none = node_ruleset("abc123", "to-jump");
  const std::string ssh = node_ruleset("abc123", "to-jump", PlatformIngress::ssh_from_all);
  const std::string all = node_ruleset("abc123", "to-jump", PlatformIngress::allow_all);
  const std::string ssh4 = "    ip daddr 192.0.2.192/26 tcp dport 2222 ct state new accept\n";
  const std::string ssh6 = "    ip6 daddr 2001:db8:0:2::/64 tcp dport 2222 ct state new accept\n";
  const std::string all4 = "    ip daddr 192.0.2.192/26 ct state new accept\n";
  const std::string all6 = "    ip6 daddr 2001:db8:0:2::/64 ct state new accept\n";
  CHECK(none.find(ssh4) == std::string::npos);
  CHECK(none.find(all4) == std::string::npos);
  for (const auto& [rules, v4, v6] : {std::tuple{ssh, ssh4, ssh6}, std::tuple{all, all4, all6}}) {
    REQUIRE(rules.find(v4) != std::string::npos);
    REQUIRE(rules.find(v6) != std::string::npos);
    CHECK(rules.find("ip daddr @sealed counter drop") < rules.find(v4));
    CHECK(rules.find(v6) < rules.find("iifname vmap @from_sandbox"));
  }
  CHECK(ssh.find(all4) == std::string::npos);  // 2222 only
  for (auto p : {PlatformIngress::none, PlatformIngress::ssh_from_all, PlatformIngress::allow_all})
    CHECK(parse_platform_ingress(platform_ingress_name(p)) == p);
  CHECK(platform_ingress_name(PlatformIngress::ssh_from_all) == "tcp-2222-from-all");
  CHECK_FALSE(parse_platform_ingress("all").has_value());
  CHECK_FALSE(parse_platform_ingress("").has_value());
}

TEST_CASE("the node's rules drop by default and order in-cluster drops before allows", "[local]") {
  std::string node = node_ruleset("abc123", "to-jump");
  CHECK_THAT(node, Catch::Contains("table inet ih_abc123"));
  CHECK_THAT(node, Catch::Contains("hook forward priority 0; policy drop;"));
  CHECK_THAT(node, Catch::Contains(
                       "iifname \"to-jump\" ip saddr 192.0.2.130 ip daddr 192.0.2.192/26 tcp dport 2222"));
  CHECK_THAT(node, Catch::Contains("iifname vmap @from_sandbox"));
  // The first SSH connection to each sandbox is noted (`add` keeps its first time), in a rule
  // before the accept and apart from it, so a full set never stops SSH.
  const std::string noted =
      "iifname \"to-jump\" ip saddr 192.0.2.130 ip daddr 192.0.2.192/26 tcp dport 2222 ct state new "
      "add @jump_ssh_first { ip daddr }\n";
  CHECK_THAT(node, Catch::Contains("set jump_ssh_first { type ipv4_addr; size 256; flags dynamic,timeout; "
                                   "timeout 86400s; }"));
  CHECK(node.find(noted) != std::string::npos);
  CHECK(node.find(noted) < node.find("tcp dport 2222 ct state new accept"));

  SandboxEgress e{3, "sb3", "192.0.2.196", true, {"203.0.113.10"}, {"198.51.100.0/24"}};
  e.proxied = {"203.0.113.10"};
  std::string add = sandbox_egress_add("abc123", e);
  auto pos = [&](const std::string& s) { return add.find(s); };
  REQUIRE(pos("ip saddr != 192.0.2.196 drop") != std::string::npos);
  REQUIRE(pos("ip daddr 192.0.2.0/24 goto sb_3_stop") != std::string::npos);
  REQUIRE(pos("ip daddr 169.254.169.254/32 goto sb_3_stop") != std::string::npos);
  REQUIRE(pos("ip daddr 203.0.113.53 udp dport 53 accept") != std::string::npos);
  // A listed address: TCP 80/443 to the name proxy, no other port, no UDP.
  CHECK(pos("ip daddr 203.0.113.10 accept") == std::string::npos);
  CHECK_THAT(add,
             Catch::Contains("add rule inet ih_abc123 px_3 ip saddr 192.0.2.196 ip daddr { 203.0.113.10 } "
                             "tcp dport { 80, 443 } ct state new dnat ip to 192.0.2.129:15080"));
  CHECK_THAT(add, Catch::Contains("add element inet ih_abc123 proxy_from_sandbox { \"sb3\" : jump px_3 }"));
  SandboxEgress any_port = e;
  any_port.domains_any_port = true;  // the selftest weakening: every port again
  const std::string weak = sandbox_egress_add("abc123", any_port);
  CHECK(weak.find("ip daddr 192.0.2.0/24 goto sb_3_stop") < weak.find("ip daddr 203.0.113.10 accept"));
  CHECK(pos("ip daddr 203.0.113.30/32 goto sb_3_stop") < pos("ip daddr 198.51.100.0/24 accept"));
  CHECK(add.rfind("add rule inet ih_abc123 sb_3 goto sb_3_stop") > pos("ip daddr 198.51.100.0/24 accept"));
  // The drop point: every drop of the sandbox's own traffic is counted per destination.
  // `update` restarts each element's timeout at every drop: its `expires` dates the last one.
  CHECK_THAT(add,
             Catch::Contains("add set inet ih_abc123 sb_3_dropped4 { type ipv4_addr . inet_proto . "
                             "inet_service; size 1024; flags dynamic,timeout; timeout 86400s; counter; }"));
  CHECK_THAT(add, Catch::Contains("add rule inet ih_abc123 sb_3_stop meta nfproto ipv4 update @sb_3_dropped4 "
                                  "{ ip daddr . meta l4proto . th dport } drop"));
  CHECK_THAT(add, Catch::Contains("add rule inet ih_abc123 sb_3_stop counter drop"));
  CHECK(pos("add chain inet ih_abc123 sb_3_stop") < pos("add chain inet ih_abc123 sb_3\n"));
  CHECK_THAT(add, Catch::Contains("add element inet ih_abc123 from_sandbox { \"sb3\" : jump sb_3 }"));

  SandboxEgress none{4, "sb4", "192.0.2.197", false, {}, {}};
  std::string strict = sandbox_egress_add("abc123", none);
  CHECK(strict.find("accept") == std::string::npos);
  std::string rm = sandbox_egress_remove("abc123", e);
  CHECK_THAT(rm, Catch::Contains("delete element inet ih_abc123 from_sandbox { \"sb3\" }"));
  CHECK_THAT(rm, Catch::Contains("delete chain inet ih_abc123 sb_3"));
  CHECK_THAT(rm, Catch::Contains("delete element inet ih_abc123 proxy_from_sandbox { \"sb3\" }"));
  CHECK_THAT(rm, Catch::Contains("delete chain inet ih_abc123 px_3"));
  CHECK_THAT(rm, Catch::Contains("delete chain inet ih_abc123 sb_3_stop"));
  CHECK(rm.find("delete set inet ih_abc123 sb_3_dropped6") >
        rm.find("delete chain inet ih_abc123 sb_3_stop"));
  // The node: the proxy reachable only through the DNAT, replies to its transparent sockets marked.
  CHECK_THAT(node, Catch::Contains("ip daddr 192.0.2.129 tcp dport 15080 ct status dnat accept"));
  CHECK_THAT(node, Catch::Contains("socket transparent 1 meta mark set 1"));
}

TEST_CASE("listed addresses go through the name proxy unless an opened range covers them", "[local]") {
  json values = {{"services", {{"default", {{"securityContext", {{"capabilities", {{"drop", {"ALL"}}}}}}}}}}};
  values["allowDomains"] = {"target.example.com"};
  SandboxEgress e = egress_for(parse_sandbox_values(values), 0, "sb0", "192.0.2.193");
  CHECK(e.proxied == std::vector<std::string>{"203.0.113.10"});
  CHECK(e.name_patterns == std::vector<std::string>{"target.example.com"});
  CHECK(name_proxy_rules(e) == "allow target.example.com\n");
  values["allowCIDR"] = {"203.0.113.0/24"};
  CHECK(egress_for(parse_sandbox_values(values), 0, "sb0", "192.0.2.193").proxied.empty());
  weaken_allow_list_scope({kWeakenSniUnchecked, kWeakenHostUnchecked}, e);
  CHECK(name_proxy_rules(e) == "allow target.example.com\nskip-sni\nskip-host\n");
  CHECK_FALSE(e.domains_any_port);
  CHECK_NOTHROW(check_weakenings({kWeakenDomainsAnyPort, kWeakenSniUnchecked, kWeakenHostUnchecked}, "s1"));
}

TEST_CASE("allowDomainsPorts opens exactly its ports on the listed name's address, no name check",
          "[local]") {
  json values = {{"services", {{"default", {{"securityContext", {{"capabilities", {{"drop", {"ALL"}}}}}}}}}}};
  values["allowDomains"] = {"target.example.com", "blocked.example.com"};
  values["allowDomainsPorts"] = {{{"port", 8443}, {"protocol", "tcp"}},
                                 {{"port", 5353}, {"protocol", "UDP"}},
                                 {{"port", 7000}},  // ANY, the chart's default
                                 {{"port", 9000}, {"protocol", "TCP"}, {"domain", "blocked.example.com"}}};
  const SandboxSpec spec = parse_sandbox_values(values);
  REQUIRE(spec.allow_domains_ports.size() == 4);
  CHECK(spec.allow_domains_ports[0].protocol == "TCP");
  CHECK(spec.allow_domains_ports[2].protocol == "ANY");
  SandboxEgress e = egress_for(spec, 3, "sb3", "192.0.2.196");
  const std::vector<AddressPort> want = {
      {"203.0.113.10", "tcp", 8443}, {"203.0.113.10", "udp", 5353}, {"203.0.113.10", "any", 7000},
      {"203.0.113.20", "tcp", 8443}, {"203.0.113.20", "udp", 5353}, {"203.0.113.20", "any", 7000},
      {"203.0.113.20", "tcp", 9000}};  // scoped to blocked.example.com: its address only
  CHECK(e.domain_ports == want);
  const std::string add = sandbox_egress_add("abc123", e);
  CHECK_THAT(add,
             Catch::Contains("add rule inet ih_abc123 sb_3 ip daddr 203.0.113.10 tcp dport 8443 accept\n"));
  CHECK_THAT(add,
             Catch::Contains("add rule inet ih_abc123 sb_3 ip daddr 203.0.113.10 udp dport 5353 accept\n"));
  CHECK_THAT(add,
             Catch::Contains(
                 "add rule inet ih_abc123 sb_3 ip daddr 203.0.113.10 meta l4proto { tcp, udp } th dport 7000 "
                 "accept\n"));
  CHECK(add.find("203.0.113.10 tcp dport 9000") == std::string::npos);
  CHECK(add.find("ip daddr 203.0.113.10 accept") == std::string::npos);  // no other port
  // After the in-cluster drops, before the sandbox's last drop.
  CHECK(add.find("ip daddr 169.254.169.254/32 goto sb_3_stop") < add.find("tcp dport 8443 accept"));
  CHECK(add.find("tcp dport 8443 accept") < add.rfind("add rule inet ih_abc123 sb_3 goto sb_3_stop"));
  // The proxy keeps 80/443, name-checked.
  CHECK_THAT(add, Catch::Contains("tcp dport { 80, 443 } ct state new dnat ip to 192.0.2.129:15080"));

  // Nothing listed, a domain not allowed, or every domain: no port rules.
  values.erase("allowDomainsPorts");
  CHECK(egress_for(parse_sandbox_values(values), 0, "sb0", "192.0.2.193").domain_ports.empty());
  values["allowDomainsPorts"] = {{{"port", 9000}, {"domain", "elsewhere.example.com"}}};
  CHECK(egress_for(parse_sandbox_values(values), 0, "sb0", "192.0.2.193").domain_ports.empty());
  values["allowDomains"] = {"*"};
  values["allowDomainsPorts"] = {{{"port", 9000}}};
  CHECK(egress_for(parse_sandbox_values(values), 0, "sb0", "192.0.2.193").domain_ports.empty());
  values["allowDomainsPorts"] = {{{"port", 9000}, {"protocol", "SCTP"}}};
  CHECK_THROWS_AS(parse_sandbox_values(values), UserError);
}

TEST_CASE("the unlisted port and the weakening that opens one port more name the same port", "[local]") {
  CHECK(unlisted_domain_port({}) == kUnlistedDomainPort);
  CHECK(unlisted_domain_port({8443}) == 8444);
  CHECK(unlisted_domain_port({8444, 8445}) == 8446);
  CHECK(unlisted_domain_port({65535, 8444}) == 8445);
  json values = {{"services", {{"default", {{"securityContext", {{"capabilities", {{"drop", {"ALL"}}}}}}}}}}};
  values["allowDomains"] = {"target.example.com"};
  values["allowDomainsPorts"] = {{{"port", 8444}, {"protocol", "TCP"}},
                                 {{"port", 8445}, {"protocol", "UDP"}}};
  SandboxEgress e = egress_for(parse_sandbox_values(values), 0, "sb0", "192.0.2.193");
  const auto listed = e.domain_ports;
  weaken_allow_list_scope({kWeakenDomainsOneMorePort}, e);
  REQUIRE(e.domain_ports.size() == listed.size() + 1);
  CHECK(e.domain_ports.back() ==
        AddressPort{"203.0.113.10", "tcp", 8445});  // 8444 is listed; UDP 8445 is not TCP
  CHECK_NOTHROW(check_weakenings({kWeakenDomainsOneMorePort}, "s1"));
  // The probe's targets: each listed entry on target.example.com, and the unlisted port.
  json expect = {{"allow_domains_ports",
                  {{{"port", 8444}, {"protocol", "TCP"}},
                   {{"port", 8445}, {"protocol", "UDP"}},
                   {{"port", 9000}, {"protocol", "TCP"}, {"domain", "other.example.com"}}}}};
  std::vector<std::string> names;
  for (const auto& t : domain_port_targets(expect)) {
    names.push_back(t.name + ":" + std::to_string(t.port) + "/" + t.proto);
    CHECK(t.witness_address == "203.0.113.10");
  }
  CHECK(names == std::vector<std::string>{"target-port-8444:8444/tcp", "target-udp-8445:8445/udp",
                                          "target-port-unlisted:8445/tcp"});
  names.clear();
  for (const auto& t : domain_port_targets(json::object()))
    names.push_back(t.name + ":" + std::to_string(t.port));
  CHECK(names == std::vector<std::string>{"target-port-unlisted:8444"});
}

TEST_CASE("the jumphost lets in the link relay's port only when the link has a relay", "[local]") {
  const std::string plain = jumphost_ruleset("abc123", "to-host");
  CHECK_THAT(plain, Catch::Contains("iifname \"to-host\" tcp dport 22 ct state new accept"));
  CHECK_THAT(plain, !Catch::Contains("dport 2200"));
  const std::string far = jumphost_ruleset("abc123", "to-host", 2200);
  CHECK_THAT(far, Catch::Contains("iifname \"to-host\" tcp dport 22 ct state new accept"));
  CHECK_THAT(far, Catch::Contains("iifname \"to-host\" tcp dport 2200 ct state new accept"));
  CHECK_THAT(far, Catch::Contains("policy drop;"));
}

TEST_CASE("the sshd configurations match the field notes and the jumphost's limits", "[local]") {
  std::string sb = sandbox_sshd_config("agent");
  for (const char* line :
       {"Port 2222", "UsePAM no", "PidFile none", "StrictModes no", "Subsystem sftp internal-sftp",
        "PasswordAuthentication no", "AllowUsers agent", "AuthorizedKeysFile /etc/ssh/authorized_keys"})
    CHECK_THAT(sb, Catch::Contains(line));
  // sshd:no-sftp: the same sshd, with no SFTP subsystem at all.
  std::string bare = sandbox_sshd_config("agent", 2222, false);
  CHECK(bare.find("Subsystem") == std::string::npos);
  CHECK_THAT(bare, Catch::Contains("AllowUsers agent"));
  CHECK(weakened_sshd_serves_sftp({}));
  CHECK_FALSE(weakened_sshd_serves_sftp({"sshd:no-sftp"}));
  CHECK_NOTHROW(check_weakenings({"sshd:no-sftp"}, "s1"));
  std::string jump = jumphost_sshd_config("jump", "198.51.100.130", {"192.0.2.193:2222", "192.0.2.194:2222"});
  for (const char* line :
       {"ListenAddress 198.51.100.130", "PermitTTY no", "ForceCommand /bin/false", "AllowTcpForwarding local",
        "PermitOpen 192.0.2.193:2222 192.0.2.194:2222", "PasswordAuthentication no"})
    CHECK_THAT(jump, Catch::Contains(line));
  CHECK_THAT(jumphost_sshd_config("jump", "198.51.100.130", {}), Catch::Contains("PermitOpen none"));
}

TEST_CASE("the image's users and the key checks", "[local]") {
  ImageSpec s;
  s.uid = 1000;
  CHECK_THAT(image_passwd(s), Catch::Contains("agent:x:1000:1000:agent:/home/agent:/bin/bash"));
  CHECK_THAT(image_group(s), Catch::Contains("agent:x:1000:"));
  CHECK(check_public_key_line("ssh-ed25519 AAAAC3Nza me@host").empty());
  CHECK_FALSE(check_public_key_line("").empty());
  CHECK_FALSE(check_public_key_line("command=\"/bin/sh\" ssh-ed25519 AAAA").empty());
  CHECK_FALSE(check_public_key_line("ssh-ed25519 AAAA\nssh-ed25519 BBBB").empty());
  CHECK_FALSE(check_public_key_line("ssh-ed25519").empty());
}

TEST_CASE("run ids, names and client files", "[local]") {
  CHECK(valid_run_id("abc123"));
  CHECK_FALSE(valid_run_id("ABC"));
  CHECK_FALSE(valid_run_id("abcdefghi"));
  CHECK_FALSE(valid_run_id("../x"));
  CHECK(valid_run_id(new_run_id()));
  CHECK(valid_sandbox_name("item-1-a2"));
  CHECK_FALSE(valid_sandbox_name("-x"));
  CHECK_FALSE(valid_sandbox_name("a/b"));
  CHECK(netns_name("abc", "node") == "ih-abc-node");
  CHECK(host_iface_name("abcdefgh").size() <= 15);

  transport::SshRoute r{{"198.51.100.130", 22, "jump", "ssh-ed25519 AAAAjump"},
                        {"192.0.2.193", 2222, "agent", "ssh-ed25519 AAAAsb"}};
  CHECK(known_hosts_lines(r) ==
        "198.51.100.130 ssh-ed25519 AAAAjump\n[192.0.2.193]:2222 ssh-ed25519 AAAAsb\n");
  auto argv = ssh_argv(r, "/x/cfg", {"id", "-u"});
  CHECK(argv == std::vector<std::string>{"ssh", "-F", "/x/cfg", "-J", "jump@198.51.100.130:22", "-p", "2222",
                                         "agent@192.0.2.193", "--", "id -u"});
  CHECK(ssh_argv(r, "/c", {"bash", "-c", "echo a b"}).back() == "bash -c 'echo a b'");
  CHECK_THAT(ssh_client_config("/x/kh", "/x/id"), Catch::Contains("StrictHostKeyChecking yes") &&
                                                      Catch::Contains("UserKnownHostsFile /x/kh") &&
                                                      Catch::Contains("IdentityFile /x/id"));
}
