#include <catch2/catch.hpp>

#include "probes/core/resolv_conf.h"
#include "probes/core/text_util.h"
#include "tests/unit/probe_fixture.h"

using namespace isoprobe;

TEST_CASE("resolv.conf: IPv4 nameservers in order, the rest reported", "[probe]") {
  ResolvConf rc = parse_resolv_conf(probe_fixture("resolv_conf_mixed.txt"));
  REQUIRE(rc.nameservers.size() == 3);
  CHECK(format_ipv4(rc.nameservers[0]) == "192.0.2.53");
  CHECK(format_ipv4(rc.nameservers[1]) == "198.51.100.53");
  CHECK(format_ipv4(rc.nameservers[2]) == "203.0.113.7");
  REQUIRE(rc.skipped.size() == 3);
  CHECK(rc.skipped[0].rfind("line 4:", 0) == 0);
  CHECK(rc.skipped[0].find("IPv6") != std::string::npos);
}

TEST_CASE("resolv.conf: hostile and empty input", "[probe]") {
  ResolvConf rc = parse_resolv_conf(probe_fixture("resolv_conf_hostile.txt"));
  CHECK(rc.nameservers.empty());
  CHECK(rc.skipped.size() == 1);
  CHECK(parse_resolv_conf("").nameservers.empty());
  std::string many;
  for (int i = 0; i < 100; ++i) many += "nameserver 127.0.0." + std::to_string(i + 1) + "\n";
  CHECK(parse_resolv_conf(many).nameservers.size() == 8);
}
