// Unit tests of the sibling checks: judged against the plan's values from the agent's
// posture and from inside a `none` sibling, with hostile and missing observations.
#include <catch2/catch.hpp>

#include "harness/verify/sibling_checks.h"

using namespace isoharness;
using namespace isoharness::verify;
using nlohmann::json;

namespace {

json values() {
  return {
      {"services",
       {{"default", json::object()}, {"scorer", {{"networkIsolated", true}}}, {"helper", json::object()}}}};
}

json siblings() {
  return json::array(
      {{{"service", "scorer"},
        {"network_mode", "none"},
        {"address", "192.0.2.194"},
        {"port", 8080},
        {"exec", {"runc", "--root", "/r", "exec", "ih-x-s1-scorer"}},
        {"probe", "/opt/isoprobe/isoprobe"}},
       {{"service", "helper"}, {"network_mode", "default"}, {"address", "192.0.2.195"}, {"port", 8080}}});
}

json target(const std::string& name, const std::string& result) {
  return {{"name", name}, {"result", result}, {"address", ""}};
}

json posture_with(const json& targets) {
  return {{"observations", json::array({{{"name", "egress"},
                                         {"status", "ok"},
                                         {"value", {{"targets", targets}}},
                                         {"evidence", "egress lines"}}})}};
}

// Facts as the result records them, read back the way the harness reads a backend's.
deploy::SandboxFacts facts_of(const json& recorded) {
  return deploy::SandboxFacts::from_json(recorded);
}
std::vector<deploy::SandboxFacts> listed(const json& recorded_siblings) {
  return facts_of({{"siblings", recorded_siblings}}).sibling_list();
}

const CheckResult* check_named(const std::vector<CheckResult>& cs, const std::string& control) {
  for (const auto& c : cs)
    if (c.control == control) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("sibling targets: by name and by address, to each sibling's listener", "[verify]") {
  auto flags = sibling_target_flags(listed(siblings()));
  CHECK(flags == std::vector<std::string>{
                     "sibling-scorer=scorer:8080/tcp", "sibling-scorer-addr=192.0.2.194:8080/tcp",
                     "sibling-helper=helper:8080/tcp", "sibling-helper-addr=192.0.2.195:8080/tcp"});
  CHECK(sibling_target_flags(listed(json::array({{{"service", "x"}}}))).empty());  // no address, no port
  CHECK(sibling_target_flags(listed("hostile")).empty());
}

TEST_CASE("from the agent: the helper reachable, the scorer not", "[verify]") {
  json good =
      posture_with({target("sibling-scorer", "timeout"), target("sibling-scorer-addr", "timeout"),
                    target("sibling-helper", "connected"), target("sibling-helper-addr", "connected")});
  auto cs = verify_siblings_from_agent(values(), listed(siblings()), good);
  REQUIRE(cs.size() == 2);
  REQUIRE(check_named(cs, "sibling:scorer"));
  CHECK(check_named(cs, "sibling:scorer")->status == isoharness::CheckStatus::pass);
  CHECK(check_named(cs, "sibling:helper")->status == isoharness::CheckStatus::pass);
  CHECK_THAT(check_named(cs, "sibling:scorer")->observed, Catch::Contains("by address 192.0.2.194: timeout"));

  json leaky =
      posture_with({target("sibling-scorer", "connected"), target("sibling-scorer-addr", "connected"),
                    target("sibling-helper", "connected"), target("sibling-helper-addr", "connected")});
  auto bad = verify_siblings_from_agent(values(), listed(siblings()), leaky);
  CHECK(check_named(bad, "sibling:scorer")->status == isoharness::CheckStatus::fail);
  CHECK_THAT(check_named(bad, "sibling:scorer")->reason,
             Catch::Contains("network_mode none but the agent reaches it"));

  json walled =
      posture_with({target("sibling-scorer", "timeout"), target("sibling-scorer-addr", "timeout"),
                    target("sibling-helper", "dns_failed"), target("sibling-helper-addr", "connected")});
  auto cut = verify_siblings_from_agent(values(), listed(siblings()), walled);
  CHECK(check_named(cut, "sibling:helper")->status == isoharness::CheckStatus::fail);
  CHECK_THAT(check_named(cut, "sibling:helper")->reason, Catch::Contains("should be reachable"));
}

TEST_CASE("from the agent: the plan decides, a missing sibling or observation fails", "[verify]") {
  json only_helper = json::array({siblings()[1]});
  json p = posture_with({target("sibling-helper", "connected"), target("sibling-helper-addr", "connected")});
  auto cs = verify_siblings_from_agent(values(), listed(only_helper), p);
  CHECK(check_named(cs, "sibling:scorer")->status == isoharness::CheckStatus::fail);
  CHECK(check_named(cs, "sibling:scorer")->observed == "not deployed");
  auto none_seen = verify_siblings_from_agent(values(), listed(siblings()), json::object());
  CHECK(check_named(none_seen, "sibling:helper")->status == isoharness::CheckStatus::fail);
  CHECK(verify_siblings_from_agent(json::object(), listed(siblings()), p).empty());
  // Backend facts that call the scorer "default" change nothing: the plan says none.
  json lying = siblings();
  lying[0]["network_mode"] = "default";
  json leaky =
      posture_with({target("sibling-scorer", "connected"), target("sibling-scorer-addr", "connected"),
                    target("sibling-helper", "connected"), target("sibling-helper-addr", "connected")});
  CHECK(check_named(verify_siblings_from_agent(values(), listed(lying), leaky), "sibling:scorer")->status ==
        isoharness::CheckStatus::fail);
}

TEST_CASE("inside a none sibling: harness exec answers and nothing is reachable", "[verify]") {
  json agent = {
      {"address", "192.0.2.193"}, {"siblings", siblings()}, {"item_resolver", {{"address", "203.0.113.64"}}}};
  std::vector<deploy::EgressTarget> world = {
      {"target", "target.example.com", 80, "http", "target.example.com", "internet"},
      {"dns", "target.example.com", 53, "dns", "target.example.com", "resolver"},
      {"metadata", "169.254.169.254", 80, "http", "", "metadata"}};
  IsolationProbe p = isolation_probe(facts_of(agent), facts_of(siblings()[0]), world);
  CHECK(p.names == std::vector<std::string>{"agent", "sibling-helper", "item-resolver", "item-dns",
                                            "world-target", "world-metadata"});
  CHECK(std::find(p.args.begin(), p.args.end(), "item-dns=scorer:53/dns") != p.args.end());
  CHECK(std::find(p.args.begin(), p.args.end(), "--resolver") != p.args.end());

  NoneSiblingObservation o;
  o.service = "scorer";
  o.exec_answered = true;
  o.asked = p.names;
  json all_blocked = json::array();
  for (const auto& n : p.names) all_blocked.push_back(target(n, n == "item-dns" ? "dns_failed" : "timeout"));
  o.posture = posture_with(all_blocked);
  auto cs = verify_none_sibling(o);
  CHECK(check_named(cs, "sibling:scorer:harness_exec")->status == isoharness::CheckStatus::pass);
  CHECK(check_named(cs, "sibling:scorer:isolated")->status == isoharness::CheckStatus::pass);

  o.posture["observations"][0]["value"]["targets"][0]["result"] = "connected";
  auto leak = verify_none_sibling(o);
  CHECK(check_named(leak, "sibling:scorer:isolated")->status == isoharness::CheckStatus::fail);
  CHECK_THAT(check_named(leak, "sibling:scorer:isolated")->reason, Catch::Contains("reaches agent"));

  o.posture = posture_with(json::array({target("agent", "timeout")}));  // the rest unreported
  CHECK(check_named(verify_none_sibling(o), "sibling:scorer:isolated")->status ==
        isoharness::CheckStatus::fail);

  NoneSiblingObservation failed;
  failed.service = "scorer";
  failed.exec_detail = "runc exec: container not running";
  auto f = verify_none_sibling(failed);
  CHECK(check_named(f, "sibling:scorer:harness_exec")->status == isoharness::CheckStatus::fail);
  CHECK(check_named(f, "sibling:scorer:isolated")->status == isoharness::CheckStatus::na);
}
