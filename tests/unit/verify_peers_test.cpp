// Unit tests of the peer checks (other evals' sandboxes): judged from the prober's report
// and each peer's serve record, with silence that has no live witness, hostile documents,
// and no peer at all.
#include <catch2/catch.hpp>

#include "harness/verify/peer_checks.h"

using namespace isoharness;
using namespace isoharness::verify;

namespace {

constexpr const char* kNonce = "00112233aabbccdd";

PeerServeSeen live_serve() {
  PeerServeSeen s;
  s.read = true;
  s.port = kPeerServePort;
  s.started_unix_ms = 1000;
  s.alive_unix_ms = 9000;
  s.until_unix_ms = 99000;
  return s;
}

// One peer at 192.0.2.20 tried on both ports; every try times out.
PeerObservation one_peer() {
  PeerObservation o;
  o.nonce = kNonce;
  o.own_addresses = {"192.0.2.10"};
  o.reach_answered = true;
  o.peers.push_back({"s2", "other-item", "other-set", {"192.0.2.20"}, live_serve(), "", "default"});
  o.tries = {{"p-ssh", 0, PeerPort::ssh, "192.0.2.20"}, {"p-serve", 0, PeerPort::serve, "192.0.2.20"}};
  o.results = {{"p-ssh", "192.0.2.20", "timeout", "", 2222, 0, 2000, 5000},
               {"p-serve", "192.0.2.20", "timeout", "", 7447, 0, 2000, 5000}};
  return o;
}

const CheckResult& control(const std::vector<CheckResult>& checks, const std::string& name) {
  for (const auto& c : checks)
    if (c.control == name) return c;
  FAIL("no check " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("peers: no live peer is n/a, never a pass", "[verify]") {
  PeerObservation o;
  o.nonce = kNonce;
  auto checks = verify_peers(o);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].control == "peers");
  CHECK(checks[0].status == CheckStatus::na);
  CHECK(checks[0].reason.find("no live peer") != std::string::npos);
}

TEST_CASE("peers: silence with the peer's serve live throughout passes both ports", "[verify]") {
  auto checks = verify_peers(one_peer());
  CHECK(control(checks, "peers:tcp-2222").status == CheckStatus::pass);
  CHECK(control(checks, "peers:serve-port").status == CheckStatus::pass);
}

TEST_CASE("peers: a connect to 2222 fails and names the port and the peer", "[verify]") {
  auto o = one_peer();
  o.results[0].result = "connected";
  o.results[0].banner = "SSH-2.0-OpenSSH_9.2p1";
  auto checks = verify_peers(o);
  const auto& c = control(checks, "peers:tcp-2222");
  CHECK(c.status == CheckStatus::fail);
  CHECK(c.reason.find("2222") != std::string::npos);
  CHECK(c.reason.find("s2") != std::string::npos);
  CHECK(c.reason.find("SSH-2.0") != std::string::npos);
  CHECK(control(checks, "peers:serve-port").status == CheckStatus::pass);
}

TEST_CASE("peers: a failure names the rule's shape: port, from which entities, for which service",
          "[verify]") {
  auto o = one_peer();
  o.results[0].result = "connected";  // 2222 only: a rule for the baseliner's sshd
  auto checks = verify_peers(o);
  const auto& ssh = control(checks, "peers:tcp-2222");
  REQUIRE(ssh.status == CheckStatus::fail);
  CHECK_THAT(ssh.reason, Catch::Contains("rule shape: ingress to service 'default' on TCP 2222 from other "
                                         "evals' pods, no other port") &&
                             Catch::Contains("fromEntities [all]"));
  o.results[1].result = "connected";  // every port: an ingress "deny" that allows all
  checks = verify_peers(o);
  const auto& serve = control(checks, "peers:serve-port");
  REQUIRE(serve.status == CheckStatus::fail);
  CHECK_THAT(serve.reason,
             Catch::Contains("ingress to service 'default' from other evals' pods on every port") &&
                 Catch::Contains("`ingress: - {}`"));
  CHECK(rule_shape(false, false, "default").empty());
}

TEST_CASE("peers: a check the profile accepts by name passes as a known risk; nothing else changes",
          "[verify]") {
  auto o = one_peer();
  o.results[0].result = "connected";
  o.results[1].result = "connected";
  auto checks = verify_peers(o);
  accept_risks(checks, {{"peers:tcp-2222", "the platform opens the baseliner's sshd"}});
  const auto& ssh = control(checks, "peers:tcp-2222");
  CHECK(ssh.status == CheckStatus::pass);
  CHECK_THAT(ssh.reason,
             Catch::StartsWith("known risk: accepted by the deployment profile (the platform opens "
                               "the baseliner's sshd): peers:tcp-2222: another eval's sandbox is "
                               "reachable") &&
                 Catch::Contains("rule shape"));
  CHECK(passed_as_known_risk(to_json(ssh)));
  // Not accepted: still a failure.
  CHECK(control(checks, "peers:serve-port").status == CheckStatus::fail);
  CHECK_FALSE(passed_as_known_risk(to_json(control(checks, "peers:serve-port"))));
  // A pass or an n/a is left alone: nothing turns a check that could not be judged into a pass.
  auto clean = verify_peers(one_peer());
  auto unwitnessed = one_peer();
  unwitnessed.peers[0].serve.read = false;
  auto na = verify_peers(unwitnessed);
  const AcceptedRisks both = {{"peers:tcp-2222", "r"}, {"peers:serve-port", "r"}};
  accept_risks(clean, both);
  accept_risks(na, both);
  CHECK(control(clean, "peers:tcp-2222").reason.find("known risk") == std::string::npos);
  CHECK(control(na, "peers:tcp-2222").status == CheckStatus::na);
  CHECK_FALSE(passed_as_known_risk(to_json(control(clean, "peers:tcp-2222"))));
  // Counted by the field, never by the wording: a passing check whose reason merely begins
  // with the words is no known risk.
  CHECK(to_json(ssh)["known_risk"] == true);
  auto worded = to_json(control(clean, "peers:tcp-2222"));
  worded["reason"] = "known risk: written by someone";
  CHECK_FALSE(passed_as_known_risk(worded));
}

TEST_CASE("peers: refused is an answer from the peer, so reachable", "[verify]") {
  auto o = one_peer();
  o.results[1].result = "refused";
  CHECK(control(verify_peers(o), "peers:serve-port").status == CheckStatus::fail);
}

TEST_CASE("peers: the peer's record outweighs the prober's silence", "[verify]") {
  SECTION("by nonce") {
    auto o = one_peer();
    o.peers[0].serve.connections.push_back({"198.51.100.9", kNonce, 3000});
    auto c = control(verify_peers(o), "peers:serve-port");
    CHECK(c.status == CheckStatus::fail);
    CHECK(c.reason.find("record holds this sandbox") != std::string::npos);
  }
  SECTION("by the prober's own address, without a nonce") {
    auto o = one_peer();
    o.peers[0].serve.connections.push_back({"192.0.2.10", "", 3000});
    CHECK(control(verify_peers(o), "peers:serve-port").status == CheckStatus::fail);
  }
  SECTION("an older connection from the prober's address is the sandbox that had it before") {
    auto o = one_peer();
    o.peers[0].serve.connections.push_back({"192.0.2.10", "ffffffffffffffff", 500});
    CHECK(control(verify_peers(o), "peers:serve-port").status == CheckStatus::pass);
  }
  SECTION("someone else's connection is not this prober's") {
    auto o = one_peer();
    o.peers[0].serve.connections.push_back({"192.0.2.99", "ffffffffffffffff", 3000});
    CHECK(control(verify_peers(o), "peers:serve-port").status == CheckStatus::pass);
  }
}

TEST_CASE("peers: silence without a live witness is not a pass", "[verify]") {
  SECTION("no record came back") {
    auto o = one_peer();
    o.peers[0].serve = PeerServeSeen{};
    o.peers[0].serve.why_not = "no session into the peer";
    auto checks = verify_peers(o);
    for (const char* name : {"peers:tcp-2222", "peers:serve-port"}) {
      CHECK(control(checks, name).status == CheckStatus::na);
      CHECK(control(checks, name).reason.find("unwitnessed") != std::string::npos);
    }
  }
  SECTION("the serve stopped looking before the try ended") {
    auto o = one_peer();
    o.peers[0].serve.alive_unix_ms = 4000;
    CHECK(control(verify_peers(o), "peers:serve-port").status == CheckStatus::na);
  }
  SECTION("the serve started after the try") {
    auto o = one_peer();
    o.peers[0].serve.started_unix_ms = 2500;
    CHECK(control(verify_peers(o), "peers:tcp-2222").status == CheckStatus::na);
  }
  SECTION("the prober reported nothing for a try") {
    auto o = one_peer();
    o.results.pop_back();
    CHECK(control(verify_peers(o), "peers:serve-port").status == CheckStatus::na);
  }
  SECTION("the prober did not answer at all") {
    auto o = one_peer();
    o.reach_answered = false;
    o.reach_detail = "exit 139";
    for (const auto& c : verify_peers(o)) CHECK(c.status == CheckStatus::na);
  }
}

TEST_CASE("peers: an ICMP error is told apart from no answer in the evidence", "[verify]") {
  auto o = one_peer();
  o.results[0].result = "unreachable";
  o.results[0].err = 113;
  const auto c = control(verify_peers(o), "peers:tcp-2222");
  CHECK(c.status == CheckStatus::pass);
  CHECK(c.evidence.find("an error came back") != std::string::npos);
  CHECK(control(verify_peers(o), "peers:serve-port").evidence.find("no answer within") != std::string::npos);
}

TEST_CASE("peers: hostile reach and record documents", "[verify]") {
  CHECK_FALSE(parse_reach("not json"));
  CHECK_FALSE(parse_reach(R"({"schema":"other","results":[]})"));
  CHECK_FALSE(parse_reach(R"({"schema":"isoharness.reach/v1","results":{}})"));
  CHECK_FALSE(parse_reach(R"({"schema":"isoharness.reach/v1","results":[1]})"));
  auto typed =
      parse_reach(R"({"schema":"isoharness.reach/v1","results":[{"name":3,"result":["x"],"port":"22"}]})");
  REQUIRE(typed);
  REQUIRE(typed->size() == 1);
  CHECK((*typed)[0].name.empty());
  CHECK((*typed)[0].result.empty());
  CHECK((*typed)[0].port == 0);

  CHECK_FALSE(parse_peer_serve("").read);
  CHECK_FALSE(parse_peer_serve(R"({"schema":"isoharness.peer-serve/v1","port":7447})").read);
  CHECK_FALSE(
      parse_peer_serve(
          R"({"schema":"isoharness.peer-serve/v1","port":22,"started_unix_ms":5,"alive_unix_ms":9,"connections":[]})")
          .read);
  auto ok = parse_peer_serve(
      R"({"schema":"isoharness.peer-serve/v1","port":7447,"started_unix_ms":5,"alive_unix_ms":9,
          "connections":[{"from":"192.0.2.1","nonce":"abcdabcd","at_unix_ms":7},"junk"]})");
  CHECK(ok.read);
  REQUIRE(ok.connections.size() == 1);
  CHECK(ok.connections[0].nonce == "abcdabcd");
}

TEST_CASE("peers: another network is said so, and its silence is no pass", "[verify]") {
  SECTION("reached through another jumphost") {
    auto o = one_peer();
    o.peers[0].separate_network = "the peer is reached through another jumphost (192.0.2.77:22)";
    auto checks = verify_peers(o);
    for (const char* name : {"peers:tcp-2222", "peers:serve-port"}) {
      CHECK(control(checks, name).status == CheckStatus::na);
      CHECK(control(checks, name).reason.find("no route, not a policy") != std::string::npos);
    }
    o.results[0].result = "connected";  // an answer still fails it
    CHECK(control(verify_peers(o), "peers:tcp-2222").status == CheckStatus::fail);
  }
  SECTION("the peer's address is the prober's own") {
    auto o = one_peer();
    o.own_addresses.push_back("192.0.2.20");
    o.results.clear();  // not tried
    const auto c = control(verify_peers(o), "peers:tcp-2222");
    CHECK(c.status == CheckStatus::na);
    CHECK(c.reason.find("this sandbox's own") != std::string::npos);
  }
}

TEST_CASE("peers: each check names who judged it, by field, not by its wording", "[verify]") {
  using J = std::vector<Judge>;
  SECTION("silence witnessed by the peer: both the prober and the peer's record") {
    const auto checks = verify_peers(one_peer());
    CHECK(control(checks, "peers:tcp-2222").judges == J{Judge::sandbox_report, Judge::witness});
    CHECK(control(checks, "peers:serve-port").judges == J{Judge::sandbox_report, Judge::witness});
  }
  SECTION("the prober's connect answered: its report") {
    auto o = one_peer();
    o.results[0].result = "connected";
    CHECK(control(verify_peers(o), "peers:tcp-2222").judges == J{Judge::sandbox_report});
  }
  SECTION("the peer's record holds the prober although the prober reports silence: the witness") {
    auto o = one_peer();
    o.peers[0].serve.connections.push_back({"198.51.100.9", kNonce, 3000});
    CHECK(control(verify_peers(o), "peers:serve-port").judges == J{Judge::witness});
  }
  SECTION("both saw it: both, once each") {
    auto o = one_peer();
    o.results[1].result = "connected";
    o.peers.push_back({"s3", "third-item", "other-set", {"192.0.2.21"}, live_serve(), "", "default"});
    o.tries.push_back({"p-serve-3", 1, PeerPort::serve, "192.0.2.21"});
    o.results.push_back({"p-serve-3", "192.0.2.21", "connected", "", 7447, 0, 2000, 5000});
    o.peers[0].serve.connections.push_back({"198.51.100.9", kNonce, 3000});
    CHECK(control(verify_peers(o), "peers:serve-port").judges == J{Judge::witness, Judge::sandbox_report});
  }
}
