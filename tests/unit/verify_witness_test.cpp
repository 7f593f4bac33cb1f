// Egress judged by the two witnesses (harness/verify/witness_checks.cc reads their records,
// egress_verdict.cc decides): a blocked way out passes only on the drop point's record that
// it was stopped and no arrival; a reachable one only on an arrival; missing evidence is
// `unwitnessed`, and the sandbox's report decides only under `witness: none`.
#include <catch2/catch.hpp>

#include "harness/verify/verify.h"
#include "tests/unit/policy_test_util.h"

using namespace isoharness;
using nlohmann::json;

namespace {

json witness_posture(const json& results) {
  json targets = json::array();
  for (const auto& [name, result] : results.items()) targets.push_back({{"name", name}, {"result", result}});
  return {{"schema", "isoharness.posture/v1"},
          {"observations",
           {{{"name", "egress"},
             {"status", "ok"},
             {"value", {{"targets", targets}}},
             {"errno", 0},
             {"evidence", "canary-udp 203.0.113.40:53/udp -> timeout"}}}}};
}

json witness_strict_expect() {
  auto plan = test::plan_yaml(
      "eval_set:\n  isolation: strict\n  tasks:\n    - name: t\n      items:\n        - name: i\n");
  REQUIRE(plan.accepted());
  return plan.items[0].expect;
}

std::vector<deploy::EgressTarget> witness_targets() {
  return {{"canary-udp", "203.0.113.40", 53, "udp", "", "internet", "203.0.113.40"},
          {"canary-icmp", "203.0.113.40", 0, "icmp", "", "internet", "203.0.113.40"},
          {"canary-tcp", "203.0.113.40", 443, "tcp", "", "internet", "203.0.113.40"},
          {"dns-exfil", "witness.example.org", 53, "exfil", "probe.witness.example.org", "internet",
           "witness.example.org"},
          {"jumphost", "192.0.2.130", 22, "tcp", "", "cluster"}};
}

// The drop point's record of each blocked way out of witness_targets() (and of its DNS
// lookup), as the local node's counters report them.
std::vector<deploy::DropRecord> every_attempt_dropped() {
  auto d = [](const char* proto, const char* dest, int port) {
    deploy::DropRecord r;
    r.proto = proto;
    r.source = "192.0.2.193";
    r.destination = dest;
    r.port = port;
    r.count = 2;
    return r;
  };
  return {d("udp", "203.0.113.40", 53), d("icmp", "203.0.113.40", 0), d("tcp", "203.0.113.40", 443),
          d("udp", "203.0.113.53", 53), d("tcp", "192.0.2.130", 22)};
}

deploy::WitnessView witness_view(std::vector<deploy::WitnessRecord> records,
                                 std::vector<deploy::DropRecord> drops = every_attempt_dropped()) {
  deploy::WitnessView v;
  v.witness = "test witness";
  v.source = "192.0.2.193";
  v.nonce = "0123456789abcdef";
  v.records = std::move(records);
  v.drops = deploy::DropView{"test drop point", std::move(drops), true, ""};
  return v;
}

// A copy: callers pass the temporary vector witness_judge returns, and a reference into it
// would dangle at the end of the statement.
verify::CheckResult witness_find(const std::vector<verify::CheckResult>& checks, const std::string& control) {
  for (const auto& c : checks)
    if (c.control == control) return c;
  FAIL("no check named " << control);
  throw std::logic_error("unreachable");
}

std::vector<verify::CheckResult> witness_judge(const json& posture, const deploy::WitnessView* witness,
                                               bool waived = false) {
  verify::HostFacts host;
  const auto targets = witness_targets();
  return verify::verify_sandbox(
      {witness_strict_expect(), posture, host, targets, policy::Level::strict, witness, waived});
}

const char* const kEgressControls[] = {"egress:canary-udp", "egress:canary-icmp", "egress:canary-tcp",
                                       "egress:dns-exfil", "egress:jumphost"};

const json kWitnessAllBlocked = {{"canary-udp", "timeout"},
                                 {"canary-icmp", "timeout"},
                                 {"canary-tcp", "timeout"},
                                 {"dns-exfil", "dns_failed"},
                                 {"jumphost", "timeout"}};

}  // namespace

TEST_CASE("witness: every attempt dropped and nothing arrived: every egress check passes", "[verify]") {
  auto w = witness_view(
      {{1, "udp", "192.0.2.200", "203.0.113.40", 53, "ffffffffffffffff", ""}});  // another sandbox
  auto checks = witness_judge(witness_posture(kWitnessAllBlocked), &w);
  for (const char* c : kEgressControls) {
    INFO(c);
    CHECK(witness_find(checks, c).status == CheckStatus::pass);
    CHECK(witness_find(checks, c).evidence.find("judged by the witnesses (rule B6") == 0);
    CHECK(witness_find(checks, c).evidence.find("dropped") != std::string::npos);
  }
}

TEST_CASE("witness: a sandbox that reports connected to a blocked target fails though the witness is silent",
          "[verify]") {
  json results = kWitnessAllBlocked;
  for (const char* name : {"canary-udp", "canary-tcp", "jumphost"}) results[name] = "connected";
  auto w = witness_view({});
  auto checks = witness_judge(witness_posture(results), &w);
  for (const char* c : {"egress:canary-udp", "egress:canary-tcp", "egress:jumphost"}) {
    INFO(c);
    CHECK(witness_find(checks, c).status == CheckStatus::fail);
    CHECK(witness_find(checks, c).reason.find("rule B1") != std::string::npos);
  }
  // The same admission with the witness dead, or with no witness at all, fails too.
  w.complete = false;
  w.note = "the witness stopped";
  CHECK(witness_find(witness_judge(witness_posture(results), &w), "egress:canary-udp").status ==
        CheckStatus::fail);
  CHECK(witness_find(witness_judge(witness_posture(results), nullptr), "egress:canary-udp").status ==
        CheckStatus::fail);
}

TEST_CASE(
    "witness: an agent that sends nothing (no drop record, nothing arrived) is unwitnessed, never passed",
    "[verify]") {
  auto w = witness_view({}, {});
  auto checks = witness_judge(witness_posture(kWitnessAllBlocked), &w);
  for (const char* c : kEgressControls) {
    INFO(c);
    CHECK(witness_find(checks, c).status == CheckStatus::unwitnessed);
    CHECK(witness_find(checks, c).reason.find("rule B5") != std::string::npos);
  }
  // A drop record of another way out does not stand for this one.
  auto other = witness_view({}, {every_attempt_dropped()[0]});
  CHECK(
      witness_find(witness_judge(witness_posture(kWitnessAllBlocked), &other), "egress:canary-tcp").status ==
      CheckStatus::unwitnessed);
}

TEST_CASE("witness: a dead or incomplete witness leaves every egress check unwitnessed", "[verify]") {
  auto incomplete = witness_view({});
  incomplete.complete = false;
  incomplete.note = "the witness log has no heartbeat after 12:00:01";
  auto no_drops = witness_view({});
  no_drops.drops->complete = false;
  no_drops.drops->note = "cannot list the drop set";
  auto no_drop_point = witness_view({});
  no_drop_point.drops.reset();
  for (const auto* w : {&incomplete, &no_drops, &no_drop_point}) {
    auto checks = witness_judge(witness_posture(kWitnessAllBlocked), w);
    for (const char* c :
         {"egress:canary-udp", "egress:canary-icmp", "egress:canary-tcp", "egress:dns-exfil"}) {
      INFO(c << " " << w->note);
      CHECK(witness_find(checks, c).status == CheckStatus::unwitnessed);
    }
  }
  CHECK(witness_find(witness_judge(witness_posture(kWitnessAllBlocked), &incomplete), "egress:canary-udp")
            .evidence.find("heartbeat") != std::string::npos);
  // No witness and no `witness: none`: unwitnessed, not the sandbox's word.
  auto blind = witness_judge(witness_posture(kWitnessAllBlocked), nullptr);
  CHECK(witness_find(blind, "egress:canary-udp").status == CheckStatus::unwitnessed);
}

TEST_CASE("witness: only `witness: none` puts egress on the sandbox's report, marked so", "[verify]") {
  auto checks = witness_judge(witness_posture(kWitnessAllBlocked), nullptr, true);
  for (const char* c : kEgressControls) {
    INFO(c);
    CHECK(witness_find(checks, c).status == CheckStatus::pass);
    CHECK(witness_find(checks, c).evidence.find("judged by the sandbox's own report") == 0);
  }
}

TEST_CASE("witness: a sandbox that reports blocked while the witness saw it arrive fails with both records",
          "[verify]") {
  auto w = witness_view({{2, "udp", "192.0.2.193", "203.0.113.40", 53, "0123456789abcdef", ""},
                         {3, "icmp-echo", "192.0.2.193", "203.0.113.40", 0, "0123456789abcdef", ""},
                         {4, "tcp-syn", "192.0.2.193", "203.0.113.40", 443, "", ""},
                         {5, "dns", "203.0.113.64", "witness.example.org", 53, "0123456789abcdef",
                          "ihw-0123456789abcdef.witness.example.org"}});
  auto checks = witness_judge(witness_posture(kWitnessAllBlocked), &w);
  for (const char* c : {"egress:canary-udp", "egress:canary-icmp", "egress:canary-tcp", "egress:dns-exfil"}) {
    INFO(c);
    const auto& r = witness_find(checks, c);
    CHECK(r.status == CheckStatus::fail);
    CHECK(r.reason.find("rule B2") != std::string::npos);
    CHECK(r.reason.find("the sandbox reported") != std::string::npos);
    CHECK(r.observed.find("arrived") == 0);
    CHECK(r.evidence.find("sandbox's report") != std::string::npos);
  }
}

TEST_CASE("witness: a TCP SYN counts only from the sandbox's own address and port", "[verify]") {
  auto w = witness_view({{4, "tcp-syn", "192.0.2.194", "203.0.113.40", 443, "", ""},
                         {5, "tcp-syn", "192.0.2.193", "203.0.113.40", 80, "", ""}});
  CHECK(witness_find(witness_judge(witness_posture(kWitnessAllBlocked), &w), "egress:canary-tcp").status ==
        CheckStatus::pass);
}

TEST_CASE("witness: a DNS query the resolver did not pass on is the stop of data leaving through DNS",
          "[verify]") {
  // The sandbox may use DNS (its resolver accepted the query), but the zone never got it.
  // The canary's UDP port 53 dropped is that target's datagram, not a lookup.
  auto w = witness_view({{2, "udp", "192.0.2.193", "203.0.113.65", 53, "0123456789abcdef",
                          "ihw-0123456789abcdef.witness.example.org"}},
                        {every_attempt_dropped()[0]});
  const auto c = witness_find(witness_judge(witness_posture(kWitnessAllBlocked), &w), "egress:dns-exfil");
  CHECK(c.status == CheckStatus::pass);
  CHECK(c.evidence.find("resolver") != std::string::npos);
  // The same query without the probe's nonce is no one's evidence.
  auto foreign = witness_view({{2, "udp", "192.0.2.193", "203.0.113.65", 53, "", "witness.example.org"}},
                              {every_attempt_dropped()[0]});
  CHECK(
      witness_find(witness_judge(witness_posture(kWitnessAllBlocked), &foreign), "egress:dns-exfil").status ==
      CheckStatus::unwitnessed);
  // Nor is the probe's nonce asked under another zone: no attempt at this way out.
  auto elsewhere = witness_view({{2, "udp", "192.0.2.193", "203.0.113.65", 53, "0123456789abcdef",
                                  "ihw-0123456789abcdef.silent.invalid"}},
                                {every_attempt_dropped()[0]});
  CHECK(witness_find(witness_judge(witness_posture(kWitnessAllBlocked), &elsewhere), "egress:dns-exfil")
            .status == CheckStatus::unwitnessed);
}

TEST_CASE("witness: a target the plan opens must be seen arriving", "[verify]") {
  auto plan = test::plan_yaml(
      "eval_set:\n  isolation: {level: strict, allow_cidr: [203.0.113.40/32]}\n  tasks:\n    - name: t\n"
      "      items:\n        - name: i\n");
  REQUIRE(plan.accepted());
  verify::HostFacts host;
  const auto targets = witness_targets();
  json results = kWitnessAllBlocked;
  results["canary-udp"] = "connected";
  auto w = witness_view({});
  auto checks = verify::verify_sandbox(
      {plan.items[0].expect, witness_posture(results), host, targets, policy::Level::strict, &w});
  const auto& c = witness_find(checks, "egress:canary-udp");
  CHECK(c.status == CheckStatus::fail);
  CHECK(c.reason.find("rule A3") != std::string::npos);
  auto seen = witness_view({{2, "udp", "192.0.2.193", "203.0.113.40", 53, "0123456789abcdef", ""}});
  CHECK(witness_find(verify::verify_sandbox({plan.items[0].expect, witness_posture(results), host, targets,
                                             policy::Level::strict, &seen}),
                     "egress:canary-udp")
            .status == CheckStatus::pass);
}

TEST_CASE("witness: a closed DNS way out is stopped at the resolver or the drop point, never seen 'arriving'",
          "[verify]") {
  verify::HostFacts host;
  const std::vector<deploy::EgressTarget> targets = {
      {"dns", "target.example.com", 53, "dns", "target.example.com", "resolver", "203.0.113.53"},
      {"canary-icmp", "203.0.113.40", 0, "icmp", "", "internet", "203.0.113.40"}};
  json results = {{"dns", "dns_failed"}, {"canary-icmp", "no_socket"}};
  // The item's resolver took the query (the witness saw it arrive there) and gave no answer.
  auto w = witness_view({{2, "udp", "192.0.2.193", "203.0.113.65", 53, "", "target.example.com"}}, {});
  auto checks = verify::verify_sandbox(
      {witness_strict_expect(), witness_posture(results), host, targets, policy::Level::strict, &w});
  CHECK(witness_find(checks, "egress:dns").status == CheckStatus::pass);
  // An ICMP socket the sandbox could not open sent nothing: not applicable, not a pass.
  CHECK(witness_find(checks, "egress:canary-icmp").status == CheckStatus::na);
  // A sandbox that says it resolved the name fails; one that sent no query at all is unwitnessed.
  results["dns"] = "connected";
  CHECK(witness_find(verify::verify_sandbox({witness_strict_expect(), witness_posture(results), host, targets,
                                             policy::Level::strict, &w}),
                     "egress:dns")
            .status == CheckStatus::fail);
  results["dns"] = "dns_failed";
  auto silent = witness_view({}, {});
  CHECK(witness_find(verify::verify_sandbox({witness_strict_expect(), witness_posture(results), host, targets,
                                             policy::Level::strict, &silent}),
                     "egress:dns")
            .status == CheckStatus::unwitnessed);
}

TEST_CASE("witness: requests to one address and port are told apart by the name they present", "[verify]") {
  auto plan = test::plan_yaml(
      "eval_set:\n  isolation: {level: strict, allow_domains: [target.example.com]}\n  tasks:\n"
      "    - name: t\n      items:\n        - name: i\n");
  REQUIRE(plan.accepted());
  verify::HostFacts host;
  deploy::EgressTarget sni{"target-sni",         "target.example.com", 443,           "tls",
                           "target.example.com", "internet",           "203.0.113.10"};
  deploy::EgressTarget fronted = sni;
  fronted.name = "target-sni-fronted";
  fronted.server_name = "fronted.isoharness.invalid";
  fronted.domain = fronted.server_name;  // the plan judges the name it presents
  const std::vector<deploy::EgressTarget> targets = {sni, fronted};
  const json results = {{"target-sni", "connected"}, {"target-sni-fronted", "reset"}};
  auto judge = [&](const deploy::WitnessView& w, const char* control) {
    return witness_find(verify::verify_sandbox({plan.items[0].expect, witness_posture(results), host, targets,
                                                policy::Level::strict, &w}),
                        control);
  };
  // What arrived presented the listed name; the proxy reset the fronted name.
  const deploy::WitnessRecord listed{2,   "tcp-data", "192.0.2.193",       "203.0.113.10",
                                     443, "",         "target.example.com"};
  deploy::DropRecord reset;
  reset.proto = "tcp";
  reset.source = "192.0.2.193";
  reset.destination = "203.0.113.10";
  reset.port = 443;
  reset.name = "fronted.isoharness.invalid";
  auto w = witness_view({listed, {3, "tcp-syn", "192.0.2.193", "203.0.113.10", 443, "", ""}}, {reset});
  CHECK(judge(w, "egress:target-sni").status == CheckStatus::pass);
  const auto stopped = judge(w, "egress:target-sni-fronted");
  INFO(stopped.reason << "\n" << stopped.evidence);
  CHECK(stopped.status == CheckStatus::pass);
  CHECK(stopped.reason.find("rule B6") != std::string::npos);
  // The listed name's SYN is not the fronted request arriving...
  CHECK(stopped.observed.find("nothing arrived") == 0);
  // ...but the fronted name arriving is, whatever the proxy's record says.
  w.records.push_back({4, "tcp-data", "192.0.2.193", "203.0.113.10", 443, "", "Fronted.Isoharness.Invalid"});
  CHECK(judge(w, "egress:target-sni-fronted").reason.find("rule B2") != std::string::npos);
  // A reset of another name is no record of this one: unwitnessed.
  reset.name = "other.example.com";
  auto other = witness_view({listed}, {reset});
  CHECK(judge(other, "egress:target-sni-fronted").status == CheckStatus::unwitnessed);
  // A SYN alone does not show which name a request presented: the listed one did not arrive.
  auto syn_only = witness_view({{3, "tcp-syn", "192.0.2.193", "203.0.113.10", 443, "", ""}}, {});
  CHECK(judge(syn_only, "egress:target-sni").status == CheckStatus::fail);
  // Where nft drops the address outright (no proxy), its nameless record stops every name.
  reset.name.clear();
  auto unproxied = witness_view({}, {reset});
  CHECK(judge(unproxied, "egress:target-sni-fronted").status == CheckStatus::pass);
}
