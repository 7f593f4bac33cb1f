// Egress judged by the outside witness (harness/verify/witness_checks.cc): the witness's
// record decides where it covers a target; the sandbox's report only where none does.
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

deploy::WitnessView witness_view(std::vector<deploy::WitnessRecord> records) {
  deploy::WitnessView v;
  v.witness = "test witness";
  v.source = "192.0.2.193";
  v.nonce = "0123456789abcdef";
  v.records = std::move(records);
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

std::vector<verify::CheckResult> witness_judge(const json& posture, const deploy::WitnessView* witness) {
  verify::HostFacts host;
  const auto targets = witness_targets();
  return verify::verify_sandbox({witness_strict_expect(), posture, host, targets, "strict", witness});
}

const json kWitnessAllBlocked = {{"canary-udp", "timeout"},
                                 {"canary-icmp", "timeout"},
                                 {"canary-tcp", "timeout"},
                                 {"dns-exfil", "dns_failed"},
                                 {"jumphost", "timeout"}};

}  // namespace

TEST_CASE("witness: nothing arrived and the sandbox says blocked: every egress check passes", "[verify]") {
  auto w = witness_view(
      {{1, "udp", "192.0.2.200", "203.0.113.40", 53, "ffffffffffffffff", ""}});  // another sandbox
  auto checks = witness_judge(witness_posture(kWitnessAllBlocked), &w);
  for (const char* c : {"egress:canary-udp", "egress:canary-icmp", "egress:canary-tcp", "egress:dns-exfil"}) {
    INFO(c);
    CHECK(witness_find(checks, c).status == CheckStatus::pass);
    CHECK(witness_find(checks, c).evidence.find("judged by the witness") != std::string::npos);
  }
  // No witness covers the jumphost: the sandbox's report decides, and the evidence says so.
  CHECK(witness_find(checks, "egress:jumphost").status == CheckStatus::pass);
  CHECK(witness_find(checks, "egress:jumphost").evidence.find("sandbox's own report") != std::string::npos);
}

TEST_CASE("witness: a sandbox that reports blocked while the witness saw its nonce fails with both records",
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
    CHECK(r.reason.find("reported") != std::string::npos);
    CHECK(r.reason.find("witness saw it arrive") != std::string::npos);
    CHECK(r.observed.find("reached (witness)") != std::string::npos);
    CHECK(r.evidence.find("sandbox's report") != std::string::npos);
  }
  // Without the witness the same lying report passes: the witness is what catches it.
  auto blind = witness_judge(witness_posture(kWitnessAllBlocked), nullptr);
  CHECK(witness_find(blind, "egress:canary-udp").status == CheckStatus::pass);
  CHECK(witness_find(blind, "egress:canary-udp").evidence.find("no outside witness") != std::string::npos);
}

TEST_CASE("witness: a TCP SYN counts only from the sandbox's own address and port", "[verify]") {
  auto w = witness_view({{4, "tcp-syn", "192.0.2.194", "203.0.113.40", 443, "", ""},
                         {5, "tcp-syn", "192.0.2.193", "203.0.113.40", 80, "", ""}});
  CHECK(witness_find(witness_judge(witness_posture(kWitnessAllBlocked), &w), "egress:canary-tcp").status ==
        CheckStatus::pass);
}

TEST_CASE("witness: a log it cannot judge on leaves the sandbox's report in charge, saying why", "[verify]") {
  auto w = witness_view({{2, "udp", "192.0.2.193", "203.0.113.40", 53, "0123456789abcdef", ""}});
  w.complete = false;
  w.note = "the witness log reached its line cap";
  const auto c = witness_find(witness_judge(witness_posture(kWitnessAllBlocked), &w), "egress:canary-udp");
  CHECK(c.status == CheckStatus::pass);
  CHECK(c.evidence.find("line cap") != std::string::npos);
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
  auto checks =
      verify::verify_sandbox({plan.items[0].expect, witness_posture(results), host, targets, "strict", &w});
  const auto& c = witness_find(checks, "egress:canary-udp");
  CHECK(c.status == CheckStatus::fail);
  CHECK(c.reason.find("witness saw nothing arrive") != std::string::npos);
}
