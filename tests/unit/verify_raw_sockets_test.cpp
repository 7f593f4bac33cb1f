// raw_sockets (harness/verify/raw_socket_checks.cc): a raw or packet socket that opens
// while the plan leaves out CAP_NET_RAW fails; where the plan keeps it, both outcomes pass.
#include <catch2/catch.hpp>

#include "harness/verify/verify.h"
#include "tests/unit/policy_test_util.h"

using namespace isoharness;
using nlohmann::json;

namespace {

json raw_posture(const json& sockets) {
  json value = {{"targets", json::array()}, {"nonce", "0123456789abcdef"}};
  if (!sockets.is_null()) value["sockets"] = sockets;
  return {{"schema", "isoharness.posture/v1"},
          {"observations",
           {{{"name", "egress"},
             {"status", "ok"},
             {"value", value},
             {"errno", 0},
             {"evidence", "sockets: ..."}}}}};
}

json raw_expect(const std::string& level) {
  auto plan = test::plan_yaml("eval_set:\n  isolation: " + level +
                              "\n  tasks:\n    - name: t\n      items:\n        - name: i\n");
  REQUIRE(plan.accepted());
  return plan.items[0].expect;
}

verify::CheckResult raw_check(const json& expect, const json& posture) {
  verify::HostFacts host;
  const std::vector<deploy::EgressTarget> targets;
  for (auto& c : verify::verify_sandbox(
           {expect, posture, host, targets, policy::Level::strict, nullptr, false, nullptr, true}))
    if (c.control == "raw_sockets") return c;
  FAIL("no raw_sockets check");
  throw std::logic_error("unreachable");
}

const json kRefused = {{"icmp_datagram", "EACCES"}, {"raw_icmp", "EPERM"}, {"packet", "EPERM"}};
const json kRawOpens = {{"icmp_datagram", "EACCES"}, {"raw_icmp", "ok"}, {"packet", "EPERM"}};
const json kPacketOpens = {{"icmp_datagram", "ok"}, {"raw_icmp", "EPERM"}, {"packet", "ok"}};

}  // namespace

TEST_CASE("raw_sockets: strict drops CAP_NET_RAW; a raw or packet socket that opens fails", "[verify]") {
  const json strict = raw_expect("strict");
  auto refused = raw_check(strict, raw_posture(kRefused));
  CHECK(refused.status == CheckStatus::pass);
  CHECK(refused.observed == "raw ICMP socket: EPERM; packet socket: EPERM");
  for (const json& opens : {kRawOpens, kPacketOpens}) {
    auto c = raw_check(strict, raw_posture(opens));
    CHECK(c.status == CheckStatus::fail);
    CHECK_THAT(c.reason, Catch::Contains("leave out CAP_NET_RAW"));
  }
  // An ICMP datagram socket (ping_group_range) needs no capability: not this check's.
  CHECK(raw_check(strict, raw_posture({{"icmp_datagram", "ok"}, {"raw_icmp", "EPERM"}, {"packet", "EPERM"}}))
            .status == CheckStatus::pass);
  // No observation: fails, never passes by default.
  CHECK(raw_check(strict, raw_posture(json())).status == CheckStatus::fail);
  CHECK(raw_check(strict, raw_posture({{"raw_icmp", 1}, {"packet", "EPERM"}})).status == CheckStatus::fail);
}

TEST_CASE("raw_sockets: the runtime's default set decides where the plan keeps it", "[verify]") {
  // standard on the host kernel: containerd's default set holds CAP_NET_RAW.
  const json standard = raw_expect("standard");
  auto opens = raw_check(standard, raw_posture(kRawOpens));
  CHECK(opens.status == CheckStatus::pass);
  CHECK_THAT(opens.expected, Catch::Contains("allowed"));
  CHECK(raw_check(standard, raw_posture(kRefused)).status == CheckStatus::pass);  // stricter than planned
  // The plan without the capability keys: not a pass.
  verify::HostFacts host;
  const std::vector<deploy::EgressTarget> none;
  const json empty = json::object();
  const json posture = raw_posture(kRefused);
  bool seen = false;
  for (auto& c : verify::verify_sandbox(
           {empty, posture, host, none, policy::Level::strict, nullptr, false, nullptr, true}))
    if (c.control == "raw_sockets") {
      seen = true;
      CHECK(c.status == CheckStatus::fail);
    }
  CHECK(seen);
}
