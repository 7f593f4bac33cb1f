// The local world's witness log (harness/deploy/witness_log.h), the canary zone
// forwarding rule, and the egress weakenings and the targets they open.
#include <catch2/catch.hpp>

#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/drop_point.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/proxy_decisions.h"
#include "harness/deploy/local/weakenings.h"
#include "harness/deploy/witness_log.h"

using namespace isoharness;
using namespace isoharness::deploy;
using namespace isoharness::deploy::local;

TEST_CASE("witness log: records parse, malformed and unfinished lines are skipped", "[local]") {
  const std::string text =
      "W1 1000 ready - - 0 - -\n"
      "W1 1001 udp 192.0.2.193 203.0.113.40 53 0123456789abcdef -\n"
      "W1 1002 tcp-syn 192.0.2.193 203.0.113.40 443 - -\n"
      "W1 1003 dns 203.0.113.64 witness.example.org 53 0123456789abcdef "
      "ihw-0123456789abcdef.witness.example.org\n"
      "W1 x udp 192.0.2.193 203.0.113.40 53 - -\n"           // bad time
      "W1 1004 smuggled 192.0.2.193 203.0.113.40 53 - -\n"   // unknown kind
      "W1 1005 udp 192.0.2.193 203.0.113.40 70000 - -\n"     // port out of range
      "W1 1006 udp 192.0.2.193 203.0.113.40 53 - - extra\n"  // a field too many
      "W1 1007 icmp-echo 192.0.2.193 203.0.113.40 0 - -";    // still being written
  const WitnessLog log = parse_witness_log(text);
  CHECK(log.ready);
  CHECK(log.malformed == 4);
  REQUIRE(log.records.size() == 3);
  CHECK(log.records[0].kind == "udp");
  CHECK(log.records[0].nonce == "0123456789abcdef");
  CHECK(log.records[1].nonce.empty());
  CHECK(log.records[2].name == "ihw-0123456789abcdef.witness.example.org");
}

TEST_CASE("witness log: heartbeats must cover the probe's window", "[local]") {
  std::string beats = "W1 1000 ready - - 0 - -\n";
  for (long long t = 1250; t <= 3000; t += 250) beats += "W1 " + std::to_string(t) + " heartbeat - - 0 - -\n";
  const WitnessLog alive = parse_witness_log(beats);
  CHECK(alive.heartbeats.size() == 9);
  CHECK(heartbeat_gap(alive, 1400, 2900).empty());
  CHECK(select_covered_records(alive, "192.0.2.193", "", "", 1300, 3000, 1400, 2900).complete);
  // Killed mid-run: the last heartbeat is before the probe ended.
  const WitnessLog killed = parse_witness_log("W1 1000 ready - - 0 - -\nW1 1250 heartbeat - - 0 - -\n");
  CHECK_THAT(heartbeat_gap(killed, 1200, 2000), Catch::Contains("before the probe's window ended"));
  const auto v = select_covered_records(killed, "192.0.2.193", "", "", 1100, 2100, 1200, 2000);
  CHECK_FALSE(v.complete);
  CHECK_THAT(v.note, Catch::Contains("heartbeat"));
  // Stalled for longer than the allowed gap, then back.
  const WitnessLog stalled = parse_witness_log(
      "W1 1000 ready - - 0 - -\nW1 1250 heartbeat - - 0 - -\nW1 3000 heartbeat - - 0 - -\n");
  CHECK_THAT(heartbeat_gap(stalled, 1200, 2900), Catch::Contains("silent from 1250 to 3000"));
  // Started after the probe did.
  CHECK_THAT(heartbeat_gap(parse_witness_log("W1 5000 ready - - 0 - -\n"), 1000, 2000),
             Catch::Contains("no heartbeat before"));
}

TEST_CASE("witness log: the wait for a fresh heartbeat ends at one, and is bounded without", "[local]") {
  using std::chrono::milliseconds;
  using Clock = std::chrono::steady_clock;
  // The log gains a heartbeat on the third read: the wait ends there, long before its bound.
  int reads = 0;
  auto t = Clock::now();
  CHECK(
      wait_for_fresh_heartbeat([&] { return ++reads < 3 ? 4LL : 5LL; }, milliseconds(5), milliseconds(5000)));
  CHECK(reads == 3);
  CHECK(Clock::now() - t < milliseconds(2000));
  // Heartbeats already in the log at the first read prove nothing about what came after it.
  reads = 0;
  t = Clock::now();
  CHECK_FALSE(wait_for_fresh_heartbeat([&] { return ++reads, 7LL; }, milliseconds(10), milliseconds(120)));
  CHECK(Clock::now() - t >= milliseconds(120));
  CHECK(reads >= 2);
  CHECK(reads <= 14);  // every period, not in a busy loop
  // An unreadable first read is no baseline: the first count read is.
  reads = 0;
  CHECK_FALSE(
      wait_for_fresh_heartbeat([&] { return ++reads == 1 ? -1LL : 3LL; }, milliseconds(5), milliseconds(60)));
  reads = 0;
  CHECK(wait_for_fresh_heartbeat([&] { return ++reads == 1 ? -1LL : (reads == 2 ? 3LL : 4LL); },
                                 milliseconds(5), milliseconds(5000)));
  CHECK(reads == 3);
  // A log that cannot be read at all: the bound, then false.
  CHECK_FALSE(wait_for_fresh_heartbeat([] { return -1LL; }, milliseconds(5), milliseconds(30)));
}

TEST_CASE("witness log: a source that spent its quota makes its views incomplete", "[local]") {
  const WitnessLog log = parse_witness_log(
      "W1 1000 ready - - 0 - -\n"
      "W1 1500 udp 192.0.2.194 203.0.113.40 53 - -\n"
      "W1 1600 quota 192.0.2.194 - 0 - -\n");
  REQUIRE(log.quotas.size() == 1);
  CHECK_FALSE(select_witness_records(log, "192.0.2.194", "", "", 1400, 2000).complete);
  CHECK(select_witness_records(log, "192.0.2.194", "", "", 1000, 1550).complete);  // ended before
  CHECK(select_witness_records(log, "192.0.2.193", "", "", 1400, 2000).complete);  // another sandbox
}

TEST_CASE("witness log: a TCP segment carrying the nonce is a record of its own", "[local]") {
  const WitnessLog log = parse_witness_log(
      "W1 1000 ready - - 0 - -\nW1 1500 tcp-data 198.51.100.7 203.0.113.40 443 0123456789abcdef -\n");
  REQUIRE(log.records.size() == 1);
  CHECK(log.records[0].kind == "tcp-data");
  // Behind NAT: another source address, tied to the sandbox by the nonce alone.
  CHECK(select_witness_records(log, "192.0.2.193", "", "0123456789abcdef", 1400, 2000).records.size() == 1);
}

TEST_CASE("drop point: nft's set listing parses, and only what rose is a record", "[local]") {
  const std::string listing =
      R"({"nftables": [{"metainfo": {"version": "1.0.6"}}, {"set": {"family": "inet", "name": "sb_1_dropped4",)"
      R"( "elem": [{"elem": {"val": {"concat": ["203.0.113.40", "udp", 53]}, "counter": {"packets": 3, "bytes": 93}}},)"
      R"( {"elem": {"val": {"concat": ["203.0.113.40", "icmp", 0]}, "counter": {"packets": 1, "bytes": 84}}},)"
      R"( {"elem": {"val": {"concat": ["203.0.113.20", "tcp", 80]}, "counter": {"packets": 2, "bytes": 120}}},)"
      R"( {"elem": {"val": {"concat": [7, "tcp", 80]}, "counter": {"packets": 2}}}, 42]}}]})";
  const auto now = parse_drop_set(listing);
  REQUIRE(now);
  REQUIRE(now->size() == 3);  // the element with a number for an address is skipped
  CHECK((*now)[0].destination == "203.0.113.40");
  CHECK((*now)[0].packets == 3);
  const std::vector<DropCount> before = {{"203.0.113.40", "udp", 53, 3}, {"203.0.113.20", "tcp", 80, 1}};
  const auto rose = drop_increase(*now, before, "192.0.2.193", "dropped by the node's policy");
  REQUIRE(rose.size() == 2);
  CHECK(rose[0].proto == "icmp");
  CHECK(rose[0].port == 0);
  CHECK(rose[1].destination == "203.0.113.20");
  CHECK(rose[1].count == 1);
  CHECK(rose[1].dropped);
  // An empty set lists no elements; anything else is not a listing.
  CHECK(parse_drop_set(R"({"nftables": [{"set": {"name": "s"}}]})")->empty());
  CHECK_FALSE(parse_drop_set("not json"));
  CHECK_FALSE(parse_drop_set(R"({"nftables": [{"set": {"elem": 5}}]})"));
}

TEST_CASE("witness log: one sandbox's records by address or nonce, inside the window", "[local]") {
  const WitnessLog log = parse_witness_log(
      "W1 1000 ready - - 0 - -\n"
      "W1 1500 udp 192.0.2.193 203.0.113.40 53 - -\n"
      "W1 1600 udp 192.0.2.194 203.0.113.40 53 - -\n"
      "W1 1700 dns 203.0.113.64 witness.example.org 53 0123456789abcdef x\n"
      "W1 2600 udp 192.0.2.193 203.0.113.40 53 - -\n");
  auto v = select_witness_records(log, "192.0.2.193", "", "0123456789abcdef", 1400, 2000);
  CHECK(v.complete);
  REQUIRE(v.records.size() == 2);
  CHECK(v.records[0].unix_ms == 1500);
  CHECK(v.records[1].kind == "dns");

  // A log that filled before the probe ended, or never started, cannot be judged on.
  auto full = parse_witness_log("W1 1000 ready - - 0 - -\nW1 1800 full - - 0 - -\n");
  CHECK_FALSE(select_witness_records(full, "192.0.2.193", "", "", 1400, 2000).complete);
  CHECK(select_witness_records(full, "192.0.2.193", "", "", 1000, 1700).complete);
  CHECK_FALSE(select_witness_records(parse_witness_log(""), "192.0.2.193", "", "", 0, 10).complete);

  // IPv6: the sandbox's v6 address counts as its own.
  auto v6 = parse_witness_log(
      "W1 1000 ready - - 0 - -\n"
      "W1 1500 tcp-syn 2001:db8:0:2::193 2001:db8:100::40 443 - -\n"
      "W1 1501 tcp-syn 2001:db8:0:2::194 2001:db8:100::40 443 - -\n");
  CHECK(select_witness_records(v6, "192.0.2.193", "2001:db8:0:2::193", "", 1400, 2000).records.size() == 1);
}

TEST_CASE("the canary zone is forwarded only for patterns that cover it", "[local]") {
  CHECK(witness_zone_forwarded({"*"}));
  CHECK(witness_zone_forwarded({"target.example.com", "*.example.org"}));
  CHECK(witness_zone_forwarded({"*.witness.example.org"}));
  CHECK_FALSE(witness_zone_forwarded({}));
  CHECK_FALSE(witness_zone_forwarded({"target.example.com", "*.example.com", "witness.example.org"}));
}

TEST_CASE("the egress weakenings and where the witness sees each target arrive", "[local]") {
  auto accepts = weakened_egress_accepts({kWeakenAllowUdp, kWeakenAllowIcmp, kWeakenAllowIpv6});
  CHECK(accepts == std::vector<std::string>{"meta l4proto udp", "meta l4proto icmp", "meta nfproto ipv6"});
  CHECK_NOTHROW(check_weakenings({kWeakenForwardEveryName}, "s1"));
  CHECK(weakened_egress_accepts({kWeakenForwardEveryName}).empty());  // a resolver edit, not a rule

  bool exfil = false;
  for (const auto& t : world_targets()) {
    INFO(t.name);
    if (t.name == "jumphost") CHECK(t.witness_address.empty());              // the drop point's alone
    if (t.name == "dns") CHECK(t.witness_address == world_addr::kResolver);  // a query reaching a resolver
    if (t.name == "target") CHECK(t.witness_address == world_addr::kTarget);
    // Name-scoped requests arrive at the listed address too; their name tells them apart.
    if (t.name == "target-sni" || t.name == "target-sni-fronted")
      CHECK(t.witness_address == world_addr::kTarget);
    if (t.name == "metadata") CHECK(t.witness_address == world_addr::kMetadata);
    if (t.proto == "udp" || t.proto == "icmp") CHECK(!t.witness_address.empty());
    if (t.name == "canary6-tcp") CHECK(t.witness_address == world_addr::kCanary6);
    if (t.proto == "exfil") {
      exfil = true;
      CHECK(t.witness_address == kWitnessZone);
    }
  }
  CHECK(exfil);
}

TEST_CASE("IPv6 egress rules: own source only, never-opened ranges, the v6 internet only for everything",
          "[local]") {
  SandboxEgress e;
  e.index = 0;
  e.veth = "sb0";
  e.address = sandbox_address(0);
  e.address6 = sandbox_address6(0);
  CHECK(e.address6 == "2001:db8:0:2::193");
  std::string rules = sandbox_egress_add("r1", e);
  CHECK(rules.find("ip6 saddr != 2001:db8:0:2::193 drop") != std::string::npos);
  CHECK(rules.find("ip6 daddr 2001:db8:100::254/128 goto sb_0_stop") !=
        std::string::npos);  // metadata stand-in
  CHECK(rules.find("ip6 daddr 2001:db8:100::/48 accept") == std::string::npos);
  e.cidrs6 = {world_addr::kInternet6};
  rules = sandbox_egress_add("r1", e);
  CHECK(rules.find("ip6 daddr 2001:db8:100::/48 accept") != std::string::npos);
  CHECK(rules.find("ip6 daddr 2001:db8:100::30/128 goto sb_0_stop") <
        rules.find("ip6 daddr 2001:db8:100::/48 accept"));
  // A sandbox without an IPv6 address gets no IPv6 out at all.
  e.address6.clear();
  CHECK(sandbox_egress_add("r1", e).find("meta nfproto ipv6 drop") != std::string::npos);
  // The node lets neighbour discovery in; the host guard keeps the v6 world on the machine.
  CHECK(node_ruleset("r1", "to-jump").find("nd-neighbor-solicit") != std::string::npos);
  CHECK(host_guard_ruleset("r1").find("ip6 daddr 2001:db8:100::/48 counter drop") != std::string::npos);
}

TEST_CASE("name proxy decisions: one sandbox's resets are drop records with the name presented", "[local]") {
  const std::string log =
      "P1 1000 reset 192.0.2.193 203.0.113.10 443 fronted.isoharness.invalid\n"
      "P1 1001 forward 192.0.2.193 203.0.113.10 443 target.example.com\n"
      "P1 1002 reset 192.0.2.194 203.0.113.10 80 fronted.isoharness.invalid\n"  // another sandbox
      "P1 999 reset 192.0.2.193 203.0.113.10 80 early.example\n"                // before the window
      "P1 1003 reset 192.0.2.193 203.0.113.10 80 -\n"                           // no name read
      "P1 x reset 192.0.2.193 203.0.113.10 80 bad\n"                            // malformed
      "P1 1004 reset 192.0.2.193 203.0.113.10 80 unfinished";                   // no newline yet
  const DropView v = proxy_decisions(log, "192.0.2.193", 1000, 2000);
  CHECK(v.complete);
  REQUIRE(v.records.size() == 3);
  CHECK(v.records[0].dropped);
  CHECK(v.records[0].name == "fronted.isoharness.invalid");
  CHECK(v.records[0].destination == "203.0.113.10");
  CHECK(v.records[0].port == 443);
  CHECK(v.records[0].proto == "tcp");
  CHECK_FALSE(v.records[1].dropped);
  CHECK(v.records[2].name.empty());
  // A log that filled before the window ended cannot show what the proxy stopped after.
  const DropView full = proxy_decisions(log.substr(0, log.find('\n') + 1) + "P1 1500 full - - 0 -\n",
                                        "192.0.2.193", 1000, 2000);
  CHECK_FALSE(full.complete);
  CHECK(full.note.find("filled") != std::string::npos);
  CHECK(
      proxy_decisions(log.substr(0, log.find('\n') + 1) + "P1 2500 full - - 0 -\n", "192.0.2.193", 1000, 2000)
          .complete);
}
