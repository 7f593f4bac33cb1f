// The name proxy's decision (tools/name_proxy.cc): which first bytes of a connection to an
// allow-listed address it forwards and which it resets, and its per-sandbox rules file.
#include <catch2/catch.hpp>

#include "harness/deploy/local/tools/name_proxy.h"
#include "probes/core/tls_hello.h"

using namespace isoharness::world_helper;

namespace {

std::string hello(const std::string& name) {
  return isoprobe::build_client_hello(name, std::array<std::uint8_t, 32>{});
}

}  // namespace

TEST_CASE("name proxy: forwards only the names the sandbox's list allows", "[local]") {
  const NameRules rules = parse_name_rules("allow target.example.com\nallow *.example.org\n");
  REQUIRE(rules.patterns.size() == 2);
  CHECK(decide(rules, 443, hello("target.example.com"), true).verdict == "forward");
  CHECK(decide(rules, 443, hello("a.example.org"), true).verdict == "forward");
  const NameDecision fronted = decide(rules, 443, hello("fronted.isoharness.invalid"), true);
  CHECK(fronted.verdict == "reset");
  CHECK(fronted.why.find("fronted.isoharness.invalid is not allowed") != std::string::npos);
  CHECK(decide(rules, 443, hello(""), true).verdict == "reset");  // no SNI at all
  CHECK(decide(rules, 80, "GET / HTTP/1.1\r\nHost: target.example.com\r\n\r\n", true).verdict == "forward");
  CHECK(decide(rules, 80, "GET / HTTP/1.1\r\nHost: fronted.isoharness.invalid\r\n\r\n", true).verdict ==
        "reset");
  // HTTP on 443 and TLS on 80 carry no name the proxy can read: reset.
  CHECK(decide(rules, 443, "GET / HTTP/1.1\r\nHost: target.example.com\r\n\r\n", true).verdict == "reset");
  CHECK(decide(rules, 80, hello("target.example.com"), true).verdict == "reset");
  CHECK(decide(rules, 22, "SSH-2.0-x\r\n", true).verdict == "reset");
}

TEST_CASE("name proxy: waits for the whole name, resets when it never comes", "[local]") {
  const NameRules rules = parse_name_rules("allow target.example.com\n");
  const std::string full = hello("target.example.com");
  CHECK(decide(rules, 443, full.substr(0, 20), true).verdict.empty());  // read more
  CHECK(decide(rules, 443, full.substr(0, 20), false).verdict == "reset");
  CHECK(decide(rules, 80, "GET / HTTP/1.1\r\nHost: target.exa", true).verdict.empty());
  CHECK(decide(rules, 80, "GET / HTTP/1.1\r\nHost: target.exa", false).verdict == "reset");
  CHECK(decide(NameRules{}, 443, full, true).verdict == "reset");  // no rules file: nothing allowed
}

TEST_CASE("name proxy: the weakened rules skip one check only", "[local]") {
  const NameRules sni = parse_name_rules("allow target.example.com\nskip-sni\n");
  CHECK(sni.skip_sni);
  CHECK_FALSE(sni.skip_host);
  CHECK(decide(sni, 443, hello("fronted.isoharness.invalid"), true).verdict == "forward");
  CHECK(decide(sni, 80, "GET / HTTP/1.1\r\nHost: fronted.isoharness.invalid\r\n\r\n", true).verdict ==
        "reset");
  const NameRules host = parse_name_rules("allow target.example.com\nskip-host\n");
  CHECK(decide(host, 80, "GET / HTTP/1.1\r\nHost: fronted.isoharness.invalid\r\n\r\n", true).verdict ==
        "forward");
  CHECK(decide(host, 443, hello("fronted.isoharness.invalid"), true).verdict == "reset");
}

TEST_CASE("name proxy: the name a request presents, safe for one field of a log line", "[local]") {
  CHECK(isoprobe::presented_name(hello("Target.Example.COM")) == "target.example.com");
  CHECK(isoprobe::presented_name("GET / HTTP/1.0\r\nHost: fronted.isoharness.invalid:80\r\n\r\n") ==
        "fronted.isoharness.invalid");
  CHECK(isoprobe::presented_name("ihw-0123456789abcdef\n").empty());  // neither TLS nor HTTP
  CHECK(isoprobe::presented_name(hello("a b\n.example.com")) == "a?b?.example.com");
  CHECK(isoprobe::name_for_log(std::string(300, 'a')).size() == 253);
}
