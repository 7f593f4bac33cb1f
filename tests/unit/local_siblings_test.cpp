// Unit tests of sibling services in the local backend: the node policy between one
// item's services (pure: egress linking and nft text), per-service values, the world's
// item resolver configuration and the sibling's OCI bundle. The real runc/runsc/nft
// path is tests/system/sibling_system_test.cpp.
#include <catch2/catch.hpp>

#include "harness/common/error.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/oci_spec.h"
#include "harness/deploy/local/sandbox_launch.h"
#include "harness/deploy/local/sandbox_spec.h"

using namespace isoharness;
using namespace isoharness::deploy::local;
using nlohmann::json;

namespace {

json three_services() {
  return {{"services",
           {{"default", {{"securityContext", {{"capabilities", {{"drop", {"ALL"}}}}}}}},
            {"scorer",
             {{"networkIsolated", true}, {"securityContext", {{"runAsUser", 1000}, {"runAsNonRoot", true}}}}},
            {"helper", json::object()}}},
          {"allowDomains", {"target.example.com"}}};
}

struct Item {
  std::vector<SandboxEgress> egress;
  std::vector<ItemMember> members;
};

Item link(bool weaken) {
  json v = three_services();
  Item it;
  const std::vector<std::string> services = {"default", "scorer", "helper"};
  for (std::size_t i = 0; i < services.size(); ++i) {
    SandboxSpec spec = parse_sandbox_values(v, "item", services[i]);
    it.egress.push_back(egress_for(spec, static_cast<int>(i), "sb" + std::to_string(i),
                                   sandbox_address(static_cast<int>(i))));
  }
  for (std::size_t i = 0; i < services.size(); ++i)
    it.members.push_back({services[i], services[i] == "scorer", &it.egress[i]});
  link_item_egress(it.members, item_resolver_address(0), weaken);
  return it;
}

}  // namespace

TEST_CASE("each service of the values parses with its own security context and the item's egress",
          "[local]") {
  json v = three_services();
  SandboxSpec def = parse_sandbox_values(v, "item");
  CHECK(def.service == "default");
  CHECK(def.drop_all);
  CHECK(def.other_services == std::vector<std::string>{"helper", "scorer"});
  SandboxSpec scorer = parse_sandbox_values(v, "item", "scorer");
  CHECK(scorer.service == "scorer");
  CHECK(scorer.network_mode == "none");
  CHECK_FALSE(scorer.drop_all);
  CHECK(scorer.run_as_non_root);
  CHECK(scorer.allow_domains == std::vector<std::string>{"target.example.com"});
  CHECK_THROWS_AS(parse_sandbox_values(v, "item", "missing"), UserError);
  json bad = v;
  bad["services"]["helper"]["securityContext"] = {{"privileged", true}};
  CHECK_THROWS_AS(parse_sandbox_values(bad, "item", "helper"), InfraError);
}

TEST_CASE("services of one item reach each other; a none service is walled off both ways", "[local]") {
  Item it = link(false);
  const SandboxEgress &def = it.egress[0], &scorer = it.egress[1], &helper = it.egress[2];
  CHECK(def.peers == std::vector<std::string>{helper.address});
  CHECK(helper.peers == std::vector<std::string>{def.address});
  CHECK(scorer.peers.empty());
  CHECK(scorer.sealed);
  CHECK_FALSE(def.sealed);
  CHECK(scorer.item_resolver.empty());
  CHECK_FALSE(scorer.dns);
  CHECK(scorer.addresses.empty());
  CHECK(def.item_resolver == "203.0.113.64");
  CHECK(helper.item_resolver == "203.0.113.64");
  CHECK(helper.addresses ==
        std::vector<std::string>{"203.0.113.10"});  // the item's egress applies per service

  std::string scorer_rules = sandbox_egress_add("r1", scorer);
  CHECK(scorer_rules.find("accept") == std::string::npos);
  CHECK_THAT(scorer_rules, Catch::Contains("add element inet ih_r1 sealed { " + scorer.address + " }"));
  CHECK_THAT(sandbox_egress_remove("r1", scorer),
             Catch::Contains("delete element inet ih_r1 sealed { " + scorer.address + " }"));

  std::string def_rules = sandbox_egress_add("r1", def);
  auto pos = [&](const std::string& s) { return def_rules.find(s); };
  REQUIRE(pos("ip daddr " + helper.address + " accept") != std::string::npos);
  CHECK(def_rules.find("ip daddr " + scorer.address) == std::string::npos);
  REQUIRE(pos("ip daddr 203.0.113.64 udp dport 53 accept") != std::string::npos);
  // Peers and the item's resolver are accepted before the sandbox range is dropped.
  CHECK(pos("ip daddr " + helper.address + " accept") < pos("ip daddr 192.0.2.0/24 drop"));
  CHECK(sandbox_egress_remove("r1", def).find("sealed") == std::string::npos);

  std::string node = node_ruleset("r1", "to-jump");
  CHECK_THAT(node, Catch::Contains("set sealed { type ipv4_addr; }"));
  // The seal comes before the jumphost's tcp/2222 accept.
  CHECK(node.find("ip daddr @sealed counter drop") < node.find("tcp dport 2222 ct state new accept"));
}

TEST_CASE("the agent's own service with network none reaches no sibling but is not sealed", "[local]") {
  SandboxEgress a{0, "sb0", "192.0.2.193", false, {}, {}}, b{1, "sb1", "192.0.2.194", false, {}, {}};
  std::vector<ItemMember> members = {{"default", true, &a}, {"helper", false, &b}};
  link_item_egress(members, "203.0.113.64", false);
  CHECK(a.peers.empty());
  CHECK_FALSE(a.sealed);  // the harness still logs in through the jumphost
  CHECK(a.item_resolver.empty());
  CHECK(b.peers.empty());
  CHECK(b.item_resolver == "203.0.113.64");
}

TEST_CASE("the test weakening leaves a none service open like a default one", "[local]") {
  Item it = link(true);
  const SandboxEgress &def = it.egress[0], &scorer = it.egress[1];
  CHECK_FALSE(scorer.sealed);
  CHECK(std::find(def.peers.begin(), def.peers.end(), scorer.address) != def.peers.end());
  CHECK_FALSE(scorer.peers.empty());
  CHECK(std::string(kWeakenNoneSiblingReachable) == "none-sibling-reachable");
}

TEST_CASE("a sibling's bundle mounts isoprobe read-only and runs its listener", "[local]") {
  SandboxSpec spec = parse_sandbox_values(three_services(), "item", "helper");
  BundleInputs in;
  in.runtime = OciRuntime::runc;
  in.hostname = "helper";
  in.netns_path = "/var/run/netns/x";
  in.cgroups_path = "/ih-r1-s1-helper";
  in.args = {"/opt/isoprobe/isoprobe", "serve", "--port", "8080"};
  in.ro_binds = {{"/build/probes/isoprobe-bundle", kSiblingProbeDir}};
  json cfg = make_oci_config(spec, in);
  bool found = false;
  for (const auto& m : cfg["mounts"])
    if (m["destination"] == kSiblingProbeDir) {
      found = true;
      CHECK(m["source"] == "/build/probes/isoprobe-bundle");
      CHECK(std::find(m["options"].begin(), m["options"].end(), "ro") != m["options"].end());
    }
  CHECK(found);
  CHECK(cfg["process"]["args"][1] == "serve");
  CHECK(item_resolver_address(0) == "203.0.113.64");
  CHECK(item_resolver_address(kMaxSandboxes - 1) == "203.0.113.125");
}
