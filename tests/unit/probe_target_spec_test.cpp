#include <catch2/catch.hpp>

#include "probes/core/target_spec.h"
#include "probes/core/text_util.h"

using namespace isoprobe;

TEST_CASE("--target forms", "[probe]") {
  std::string err;
  auto t = parse_target_spec("named=target.example.com:443/http", &err);
  REQUIRE(t);
  CHECK(t->name == "named");
  CHECK(t->host == "target.example.com");
  CHECK(t->port == 443);
  CHECK(t->proto == TargetProto::http);
  CHECK_FALSE(t->ipv4);
  auto ip = parse_target_spec("imds=169.254.169.254:80", &err);
  REQUIRE(ip);
  CHECK(ip->proto == TargetProto::tcp);
  REQUIRE(ip->ipv4);
  CHECK(format_ipv4(*ip->ipv4) == "169.254.169.254");
  auto dns = parse_target_spec("dns=blocked.test:53/dns", &err);
  REQUIRE(dns);
  CHECK(dns->proto == TargetProto::dns);
}

TEST_CASE("--target errors name the argument and the problem", "[probe]") {
  std::string err;
  CHECK_FALSE(parse_target_spec("nohost", &err));
  CHECK(err.find("'nohost'") != std::string::npos);
  CHECK_FALSE(parse_target_spec("=a:1", &err));
  CHECK_FALSE(parse_target_spec("a=b", &err));
  CHECK(err.find("PORT") != std::string::npos);
  CHECK_FALSE(parse_target_spec("a=b:0", &err));
  CHECK_FALSE(parse_target_spec("a=b:65536", &err));
  CHECK_FALSE(parse_target_spec("a=b:99999999999999999999", &err));
  CHECK_FALSE(parse_target_spec("a=b:0/icmp", &err));  // a name resolves for udp, never for icmp
  CHECK(err.find("icmp") != std::string::npos);
  CHECK_FALSE(parse_target_spec("a=:80", &err));
  CHECK_FALSE(parse_target_spec("a=[::1:80", &err));
  CHECK(err.find("IPv6") != std::string::npos);
  CHECK_FALSE(parse_target_spec("a=[::1]:53/exfil", &err));
  CHECK_FALSE(parse_target_spec("a=[not-v6]:80", &err));
  CHECK_FALSE(parse_target_spec("a=300.1.1.1:80", &err));
  CHECK_FALSE(parse_target_spec("a=bad host:80", &err));
  CHECK_FALSE(parse_target_spec("a b=host:80", &err));
  CHECK_FALSE(parse_target_spec("a=" + std::string(300, 'x') + ":80", &err));
}

TEST_CASE("--resolver forms", "[probe]") {
  std::string err;
  auto r = parse_resolver_spec("127.0.0.1:5353", &err);
  REQUIRE(r);
  CHECK(r->port == 5353);
  auto d = parse_resolver_spec("192.0.2.53", &err);
  REQUIRE(d);
  CHECK(d->port == 53);
  CHECK_FALSE(parse_resolver_spec("resolver.test", &err));
  CHECK_FALSE(parse_resolver_spec("127.0.0.1:", &err));
  CHECK_FALSE(parse_resolver_spec("127.0.0.1:0", &err));
}

TEST_CASE("--target datagram forms: udp and icmp to addresses, exfil to a zone", "[probe]") {
  std::string err;
  auto udp = parse_target_spec("canary-udp=203.0.113.40:53/udp", &err);
  REQUIRE(udp);
  CHECK(udp->proto == TargetProto::udp);
  CHECK(is_datagram(udp->proto));
  auto icmp = parse_target_spec("canary-icmp=203.0.113.40:0/icmp", &err);
  REQUIRE(icmp);
  CHECK(icmp->port == 0);
  auto exfil = parse_target_spec("dns-exfil=witness.example.org:53/exfil", &err);
  REQUIRE(exfil);
  CHECK(exfil->proto == TargetProto::exfil);
  CHECK_FALSE(is_datagram(TargetProto::http));
  CHECK_FALSE(parse_target_spec("a=203.0.113.40:0/udp", &err));                       // port 0 only for icmp
  auto named_udp = parse_target_spec("allowed-udp=target.example.com:53/udp", &err);  // resolved first
  REQUIRE(named_udp);
  CHECK_FALSE(named_udp->ipv4);
  CHECK_FALSE(parse_target_spec("a=target.example.com:0/icmp", &err));
  CHECK(err.find("icmp targets take an IPv4") != std::string::npos);
  CHECK_FALSE(parse_target_spec("a=203.0.113.40:53/exfil", &err));
  CHECK(err.find("zone") != std::string::npos);
  auto v6 = parse_target_spec("canary6-udp=[2001:db8:0:100::40]:53/udp", &err);
  REQUIRE(v6);
  REQUIRE(v6->ipv6);
  CHECK(v6->host == "2001:db8:0:100::40");
  CHECK_FALSE(v6->ipv4);
  CHECK(parse_target_spec("canary6-tcp=[2001:db8::40]:443/tcp", &err));
  CHECK(is_valid_nonce("0123456789abcdef"));
  CHECK_FALSE(is_valid_nonce("0123456"));
  CHECK_FALSE(is_valid_nonce("0123456789ABCDEF"));
  CHECK_FALSE(is_valid_nonce(std::string(33, 'a')));
}
