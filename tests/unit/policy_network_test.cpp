#include <catch2/catch.hpp>

#include "harness/policy/chart_values.h"
#include "harness/policy/network_names.h"
#include "harness/policy/plan.h"

using namespace isoharness::policy;

TEST_CASE("domains: well-formed names pass, everything else says what to write", "[policy]") {
  CHECK_FALSE(check_domain("target.example.com").has_value());
  CHECK_FALSE(check_domain("*.example.com").has_value());
  CHECK_FALSE(check_domain("*").has_value());
  CHECK_FALSE(check_domain("a-b.c1.example.com").has_value());
  CHECK_THAT(*check_domain("https://target.example.com"), Catch::Contains("not a URL"));
  CHECK_THAT(*check_domain("target.example.com:443"), Catch::Contains("takes no port"));
  CHECK_THAT(*check_domain("203.0.113.10"), Catch::Contains("203.0.113.10/32"));
  CHECK_THAT(*check_domain("2001:db8::1"), Catch::Contains("2001:db8::1/128"));
  CHECK_THAT(*check_domain("localhost"), Catch::Contains("fully qualified"));
  CHECK_THAT(*check_domain("target.example.com."), Catch::Contains("trailing dot"));
  CHECK_THAT(*check_domain("a.*.example.com"), Catch::Contains("whole first label"));
  CHECK_THAT(*check_domain("-bad.example.com"), Catch::Contains("not a valid label"));
  CHECK_THAT(*check_domain("Target.example.com"), Catch::Contains("lowercase"));
  CHECK(check_domain(std::string(64, 'a') + ".example.com").has_value());
  CHECK(check_domain(std::string("a\0b.example.com", 15)).has_value());
  CHECK(check_domain("").has_value());
}

TEST_CASE("ranges: CIDR with its prefix and no host bits", "[policy]") {
  CHECK_FALSE(check_cidr("198.51.100.0/24").has_value());
  CHECK_FALSE(check_cidr("198.51.100.10/32").has_value());
  CHECK_FALSE(check_cidr("2001:db8::/32").has_value());
  CHECK_FALSE(check_cidr("0.0.0.0/0").has_value());
  CHECK_THAT(*check_cidr("198.51.100.7/24"), Catch::Contains("did you mean 198.51.100.0/24?"));
  CHECK_THAT(*check_cidr("2001:db8::1/32"), Catch::Contains("did you mean 2001:db8::/32?"));
  CHECK_THAT(*check_cidr("198.51.100.10"), Catch::Contains("198.51.100.10/32"));
  CHECK(check_cidr("198.51.100.0/33").has_value());
  CHECK(check_cidr("198.51.100.0/-1").has_value());
  CHECK(check_cidr("198.51.100.0/").has_value());
  CHECK(check_cidr("300.51.100.0/24").has_value());
  CHECK(check_cidr("example.com/24").has_value());
  CHECK(check_cidr("/24").has_value());
  CHECK(is_every_address("0.0.0.0/0"));
  CHECK(is_every_address("::/0"));
  CHECK_FALSE(is_every_address("0.0.0.0/1"));
  CHECK(is_every_domain("*"));
  CHECK_FALSE(is_every_domain("*.example.com"));
}

TEST_CASE("matching domains and addresses", "[policy]") {
  CHECK(domain_matches("target.example.com", "target.example.com"));
  CHECK_FALSE(domain_matches("target.example.com", "blocked.example.com"));
  CHECK(domain_matches("*.example.com", "target.example.com"));
  CHECK_FALSE(domain_matches("*.example.com", "example.com"));
  CHECK_FALSE(domain_matches("*.example.com", "target.example.com.evil.example.net"));
  CHECK(domain_matches("*", "anything.example.org"));
  CHECK(cidr_contains("198.51.100.0/24", "198.51.100.10"));
  CHECK_FALSE(cidr_contains("198.51.100.0/24", "198.51.101.10"));
  CHECK(cidr_contains("0.0.0.0/0", "203.0.113.10"));
  CHECK(cidr_contains("2001:db8::/32", "2001:db8::5"));
  CHECK_FALSE(cidr_contains("2001:db8::/32", "198.51.100.10"));
  CHECK_FALSE(cidr_contains("198.51.100.0/24", "not-an-address"));
}

TEST_CASE("egress_permitted follows the expectations, never reaching in-cluster roles", "[policy]") {
  nlohmann::json none = {{"allow_domains", nlohmann::json::array()},
                         {"allow_cidr", nlohmann::json::array()},
                         {"egress_roles", {{"internet", "none"}, {"resolver", false}}}};
  CHECK_FALSE(egress_permitted(none, "internet", "target.example.com", "203.0.113.10"));
  CHECK_FALSE(egress_permitted(none, "resolver", "", "203.0.113.53"));
  nlohmann::json all = {{"allow_domains", {"*"}},
                        {"allow_cidr", nlohmann::json::array()},
                        {"egress_roles", {{"internet", "all"}, {"resolver", true}, {"metadata", false}}}};
  CHECK(egress_permitted(all, "internet", "", "203.0.113.20"));
  CHECK_FALSE(egress_permitted(all, "metadata", "", "169.254.169.254"));
  CHECK_FALSE(egress_permitted(all, "cluster", "kubernetes.default.svc", "203.0.113.30"));
  CHECK_FALSE(egress_permitted(all, "sandbox", "", "192.0.2.10"));
  CHECK_FALSE(egress_permitted(nullptr, "internet", "a.example.com", ""));
  // "named": exactly what allow_domains and allow_cidr name.
  nlohmann::json named = {{"allow_domains", {"target.example.com"}},
                          {"allow_cidr", {"198.51.100.0/24"}},
                          {"egress_roles", {{"internet", "named"}, {"resolver", true}}}};
  CHECK(egress_permitted(named, "internet", "target.example.com", ""));
  CHECK(egress_permitted(named, "internet", "", "198.51.100.7"));
  CHECK_FALSE(egress_permitted(named, "internet", "other.example.com", "203.0.113.20"));
}

TEST_CASE("egress_permitted_on: an allowDomainsPorts entry scoped to one domain opens that domain only",
          "[policy]") {
  const nlohmann::json expect = {
      {"allow_domains", {"a.example.com", "b.example.com"}},
      {"allow_domains_ports", {{{"port", 9000}, {"protocol", "TCP"}, {"domain", "b.example.com"}}}},
      {"allow_cidr", nlohmann::json::array()},
      {"egress_roles", {{"internet", "named"}, {"resolver", true}, {"metadata", false}}}};
  using T = EgressTransport;
  CHECK(egress_permitted_on(expect, EgressWay{"internet", "b.example.com", "203.0.113.20", T::tcp, 9000}));
  CHECK_FALSE(
      egress_permitted_on(expect, EgressWay{"internet", "a.example.com", "203.0.113.10", T::tcp, 9000}));
}

TEST_CASE("egress_permitted_on: allow_domains opens TCP 80/443 to the name, allow_cidr every port",
          "[policy]") {
  using T = EgressTransport;
  nlohmann::json named = {
      {"allow_domains", {"target.example.com"}},
      {"allow_domains_ports", {{{"port", 8443}, {"protocol", "TCP"}}, {{"port", 5353}, {"protocol", "UDP"}}}},
      {"allow_cidr", {"198.51.100.0/24"}},
      {"egress_roles", {{"internet", "named"}, {"resolver", true}, {"metadata", false}}}};
  auto on = [&](std::string_view domain, std::string_view address, T transport, int port) {
    return egress_permitted_on(named, EgressWay{"internet", domain, address, transport, port});
  };
  CHECK(on("target.example.com", "203.0.113.10", T::tcp, 80));
  CHECK(on("target.example.com", "203.0.113.10", T::tcp, 443));
  CHECK(on("target.example.com", "203.0.113.10", T::tcp, 8443));  // allowDomainsPorts, TCP
  CHECK_FALSE(on("target.example.com", "203.0.113.10", T::tcp, 22));
  CHECK_FALSE(on("target.example.com", "203.0.113.10", T::udp, 53));
  CHECK_FALSE(on("target.example.com", "203.0.113.10", T::udp, 8443));  // TCP only
  CHECK(on("target.example.com", "203.0.113.10", T::udp, 5353));
  CHECK_FALSE(on("target.example.com", "203.0.113.10", T::tcp, 5353));  // UDP only
  // A forbidden name on the allowed address (domain fronting) is not allowed.
  CHECK_FALSE(on("forbidden.example.net", "203.0.113.10", T::tcp, 443));
  // An allowed CIDR: every port and protocol.
  CHECK(on("", "198.51.100.10", T::tcp, 8443));
  CHECK(on("", "198.51.100.10", T::udp, 53));
  CHECK(on("forbidden.example.net", "198.51.100.10", T::tcp, 22));
  // Metadata never, whatever the port; other transports keep egress_permitted's answer.
  CHECK_FALSE(egress_permitted_on(named, EgressWay{"metadata", "", "169.254.169.254", T::tcp, 80}));
  CHECK(egress_permitted_on(named, EgressWay{"internet", "target.example.com", "", T::other, 53}));
  nlohmann::json all = named;
  all["egress_roles"]["internet"] = "all";
  CHECK(egress_permitted_on(all, EgressWay{"internet", "x.example", "203.0.113.40", T::udp, 9}));
  CHECK_FALSE(egress_permitted_on(all, EgressWay{"metadata", "", "169.254.169.254", T::udp, 53}));
  CHECK_FALSE(egress_permitted_on(nullptr, EgressWay{"internet", "target.example.com", "", T::tcp, 80}));
}

TEST_CASE("one function says whether a rendered service is cut off from every network", "[policy]") {
  CHECK(service_network_isolated(nlohmann::json{{"networkIsolated", true}}));
  CHECK_FALSE(service_network_isolated(nlohmann::json{{"networkIsolated", false}}));
  CHECK_FALSE(service_network_isolated(nlohmann::json::object()));  // default: on the sandbox network
  CHECK_FALSE(service_network_isolated(nlohmann::json{{"networkIsolated", "true"}}));
  CHECK_FALSE(service_network_isolated(nlohmann::json()));
}
