// The plan's ways out: per target, the ports and protocols it may be reached on, the name
// checks on an allowed domain's web ports, and the metadata address closed at every level
// (and who closes it).
#include <catch2/catch.hpp>

#include "tests/unit/policy_test_util.h"

using namespace isoharness;
using namespace isoharness::policy;
using isoharness::test::all_errors;
using isoharness::test::plan_yaml;

namespace {

WayQuery to(const std::string& domain, const std::string& address, int port,
            Protocol protocol = Protocol::tcp, const std::string& name = "") {
  return WayQuery{domain, address, port, protocol, name};
}

const WayOut& way(const EgressExpectations& e, WayKind kind) {
  for (const auto& w : e.ways)
    if (w.kind == kind) return w;
  FAIL("no way of kind " << way_kind_name(kind));
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("an allowed domain is reachable on TCP 80/443 with its own name only; a range on every port",
          "[policy]") {
  Plan plan = plan_yaml(R"(eval_set:
  tasks:
    - name: t
      items:
        - name: a
          isolation: {level: strict, allow_domains: [target.example.com], allow_cidr: [198.51.100.0/24]}
)");
  INFO(all_errors(plan));
  REQUIRE(plan.accepted());
  REQUIRE(plan.items[0].egress);
  const auto& e = *plan.items[0].egress;
  const auto& d = way(e, WayKind::domain);
  CHECK(d.target == "target.example.com");
  CHECK(d.name_checked);
  CHECK(d.blocked_by == Blocker::chart);
  REQUIRE(d.open.size() == 2);
  CHECK(d.open[0].protocol == Protocol::tcp);
  CHECK(d.open[0].port == 80);
  CHECK(d.open[1].port == 443);
  const std::string addr = "203.0.113.10";
  CHECK(way_permitted(e, to("target.example.com", addr, 443)));
  CHECK(way_permitted(e, to("target.example.com", addr, 80, Protocol::tcp, "target.example.com")));
  CHECK_FALSE(way_permitted(e, to("target.example.com", addr, 22)));
  CHECK_FALSE(way_permitted(e, to("target.example.com", addr, 443, Protocol::udp)));
  CHECK_FALSE(way_permitted(e, to("target.example.com", addr, 53, Protocol::udp)));
  // A ClientHello or a Host naming a forbidden domain on the allowed domain's address.
  CHECK_FALSE(way_permitted(e, to("target.example.com", addr, 443, Protocol::tcp, "blocked.example.com")));
  CHECK_FALSE(way_permitted(e, to("target.example.com", addr, 80, Protocol::tcp, "blocked.example.com")));
  CHECK_FALSE(way_permitted(e, to("other.example.com", "203.0.113.20", 443)));
  // The range: every port and protocol, no name check.
  const auto& c = way(e, WayKind::cidr);
  CHECK_FALSE(c.name_checked);
  CHECK(way_permitted(e, to("", "198.51.100.7", 22)));
  CHECK(way_permitted(e, to("", "198.51.100.7", 5353, Protocol::udp)));
  CHECK(way_permitted(e, to("", "198.51.100.7", 443, Protocol::tcp, "anything.example.com")));
  // Metadata: closed, and the chart is what closes it here.
  const auto& m = way(e, WayKind::metadata);
  CHECK(m.target == "169.254.169.254");
  CHECK(m.open.empty());
  CHECK(m.blocked_by == Blocker::chart);
  CHECK_FALSE(way_permitted(e, to("", "169.254.169.254", 80)));
}

TEST_CASE("world egress opens every port, yet metadata stays expected closed, by a node setting",
          "[policy]") {
  Plan plan = plan_yaml(R"(eval_set:
  tasks:
    - name: t
      items:
        - {name: bridge, isolation: standard}
sandboxes:
  - {task: 0, item: 0, network_mode: bridge}
)");
  INFO(all_errors(plan));
  REQUIRE(plan.accepted());
  REQUIRE(plan.items[0].egress);
  const auto& e = *plan.items[0].egress;
  CHECK(way_permitted(e, to("any.example.com", "203.0.113.99", 22)));
  CHECK(way_permitted(e, to("", "203.0.113.99", 5000, Protocol::udp)));
  // allowDomains "*": no name check anywhere.
  CHECK(way_permitted(e, to("a.example.com", "203.0.113.99", 443, Protocol::tcp, "b.example.com")));
  const auto& m = way(e, WayKind::metadata);
  CHECK(m.open.empty());
  CHECK(m.blocked_by == Blocker::node);
  CHECK(m.why.find("node setting") != std::string::npos);
  CHECK_FALSE(way_permitted(e, to("metadata.google.internal", "169.254.169.254", 80)));
  CHECK_FALSE(way_permitted(e, to("", "169.254.169.254", 53, Protocol::udp)));
  // Nothing allowed: nothing reachable, metadata closed by the chart.
  Plan none =
      plan_yaml("eval_set:\n  tasks:\n    - name: t\n      items:\n        - {name: a, isolation: strict}\n");
  REQUIRE(none.accepted());
  REQUIRE(none.items[0].egress);
  REQUIRE(none.items[0].egress->ways.size() == 1);
  CHECK(none.items[0].egress->ways[0].kind == WayKind::metadata);
  CHECK(none.items[0].egress->ways[0].blocked_by == Blocker::chart);
  CHECK_FALSE(way_permitted(*none.items[0].egress, to("target.example.com", "203.0.113.10", 443)));
}

TEST_CASE("allowDomainsPorts adds ports, scoped to one domain or to all, without a name check", "[policy]") {
  const auto values = nlohmann::json::parse(R"({
    "allowDomains": ["a.example.com", "b.example.com"],
    "allowDomainsPorts": [{"port": 22, "domain": "a.example.com"}, {"port": 443, "protocol": "UDP"},
                          {"port": 8443, "protocol": "TCP"}]})");
  const auto e = egress_ways(values);
  CHECK(way_permitted(e, to("a.example.com", "203.0.113.1", 22)));
  CHECK(way_permitted(e, to("a.example.com", "203.0.113.1", 22, Protocol::udp)));  // ANY by default
  CHECK_FALSE(way_permitted(e, to("b.example.com", "203.0.113.2", 22)));
  CHECK(way_permitted(e, to("b.example.com", "203.0.113.2", 443, Protocol::udp)));
  CHECK(way_permitted(e, to("b.example.com", "203.0.113.2", 8443, Protocol::tcp, "c.example.com")));
  CHECK_FALSE(way_permitted(e, to("b.example.com", "203.0.113.2", 8443, Protocol::udp)));
  CHECK_FALSE(way_permitted(e, to("b.example.com", "203.0.113.2", 443, Protocol::tcp, "c.example.com")));
  // A CIDR holding the metadata address: only the node keeps it closed.
  CHECK(egress_ways(nlohmann::json::parse(R"({"allowCIDR": ["169.254.0.0/16"]})")).ways.back().blocked_by ==
        Blocker::node);
}

TEST_CASE("the plan JSON carries the ways out, and the reader takes back only a well-typed document",
          "[policy]") {
  const auto e = egress_ways(nlohmann::json::parse(R"({"allowDomains": ["t.example.com"],
                                                       "allowCIDR": ["198.51.100.0/24"]})"));
  const auto j = to_json(e);
  CHECK(j["ways"][0] == nlohmann::json::parse(R"({"kind": "domain", "target": "t.example.com",
      "open": [{"protocol": "tcp", "port": 80}, {"protocol": "tcp", "port": 443}], "name_checked": true,
      "blocked_by": "chart", "why": ")" + e.ways[0].why +
                                              R"("})"));
  std::string problem;
  auto back = egress_from_json(j, &problem);
  REQUIRE(back);
  CHECK(to_json(*back) == j);
  for (const char* hostile :
       {R"("ways")", R"({"ways": {}})", R"({"ways": [42]})",
        R"({"ways": [{"kind": "domain", "target": 1, "open": [], "name_checked": true,
                                            "blocked_by": "chart"}]})",
        R"({"ways": [{"kind": "cidr", "target": "x", "open": [{"protocol": "sctp", "port": 1}],
                                            "name_checked": false, "blocked_by": "chart"}]})",
        R"({"ways": [{"kind": "cidr", "target": "x", "open": [{"protocol": "tcp", "port": 70000}],
                                            "name_checked": false, "blocked_by": "chart"}]})",
        R"({"ways": [{"kind": "cidr", "target": "x", "open": [], "name_checked": false,
                                            "blocked_by": "chart"}]})"}) {
    INFO(hostile);
    problem.clear();
    CHECK_FALSE(egress_from_json(nlohmann::json::parse(hostile), &problem));
    CHECK_FALSE(problem.empty());
  }
  // In the plan document, beside expect.
  Plan plan =
      plan_yaml("eval_set:\n  tasks:\n    - name: t\n      items:\n        - {name: a, isolation: strict}\n");
  const auto doc = to_json(plan);
  CHECK(doc["items"][0]["egress"]["ways"][0]["kind"] == "metadata");
}

TEST_CASE("egress_permitted per port and protocol: a named domain on TCP 80/443 only, a range everywhere",
          "[policy]") {
  Plan plan = plan_yaml(R"(eval_set:
  tasks:
    - name: t
      items:
        - name: a
          isolation: {level: strict, allow_domains: [target.example.com], allow_cidr: [198.51.100.0/24]}
        - {name: open, isolation: standard}
sandboxes:
  - {task: 0, item: 1, network_mode: bridge}
)");
  INFO(all_errors(plan));
  REQUIRE(plan.accepted());
  const auto& named = plan.items[0].expect.get();
  CHECK(egress_permitted(named, "internet", "target.example.com", "203.0.113.10", 443, "tcp"));
  CHECK(egress_permitted(named, "internet", "target.example.com", "203.0.113.10", 80, "tcp"));
  CHECK_FALSE(egress_permitted(named, "internet", "target.example.com", "203.0.113.10", 22, "tcp"));
  CHECK_FALSE(egress_permitted(named, "internet", "target.example.com", "203.0.113.10", 443, "udp"));
  CHECK_FALSE(egress_permitted(named, "internet", "target.example.com", "203.0.113.10", 0, "icmp"));
  CHECK(egress_permitted(named, "internet", "", "198.51.100.9", 22, "tcp"));
  CHECK(egress_permitted(named, "internet", "", "198.51.100.9", 53, "udp"));
  CHECK(egress_permitted(named, "internet", "", "198.51.100.9", 0, "icmp"));
  CHECK_FALSE(egress_permitted(named, "internet", "", "198.51.100.9", 22, "sctp"));
  CHECK_FALSE(egress_permitted(named, "metadata", "", "169.254.169.254", 80, "tcp"));
  const auto& all = plan.items[1].expect.get();
  CHECK(egress_permitted(all, "internet", "x.example.com", "203.0.113.50", 2222, "tcp"));
  CHECK_FALSE(egress_permitted(all, "internet", "", "169.254.169.254", 80, "tcp"));
  CHECK_FALSE(egress_permitted(all, "metadata", "", "169.254.169.254", 80, "tcp"));
}
