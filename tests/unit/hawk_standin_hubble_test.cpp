// The stand-in platform's Hubble (tests/hawk_standin/hawk `hubble observe`, docs/CONTRACTS.md
// §4.6): the flows it builds from a listing of a world's node table (the drop sets dated by
// their timeouts, the first SSH connection) are what the harness's parser and selection
// take as a deployment's drop point: times from the kernel's `expires`, the pod `hawk status`
// names, the reach back past the window's start from the first SSH connection only.
#include <catch2/catch.hpp>

#include "harness/common/subprocess.h"
#include "harness/deploy/hawk/hubble_flows.h"

using namespace isoharness;
using namespace isoharness::deploy::hawk;

namespace {

constexpr long long kListedAt = 1796306400000;  // 2026-12-03T14:00:00Z, the listing's time

// Loads the stand-in as a module and prints the flows of the fixture's table, as its
// `hubble observe` would for an eval "hs-abc123" whose agent has the fixture's addresses.
const char* const kFlowsOfTable = R"(import importlib.machinery, importlib.util, json, sys
loader = importlib.machinery.SourceFileLoader("standin", sys.argv[1])
spec = importlib.util.spec_from_loader("standin", loader)
standin = importlib.util.module_from_spec(spec)
loader.exec_module(standin)
info = {"sandbox": {"host": "192.0.2.193"},
        "facts": {"address": "192.0.2.193", "address6": "2001:db8:200::193", "siblings": []}}
flows = standin.world_flows("hs-abc123", {"node_class": "tier"}, info, open(sys.argv[2]).read(), int(sys.argv[3]))
for ms, flow in sorted(flows, key=lambda f: f[0]):
    print(json.dumps(flow))
)";

std::string standin_flows() {
  const std::string src = ISOHARNESS_SOURCE_DIR;
  RunOptions opts;
  opts.deadline = std::chrono::seconds(30);
  auto r = run_command({"python3", "-c", kFlowsOfTable, src + "/tests/hawk_standin/hawk",
                        src + "/tests/fixtures/hubble/standin-node-table.txt", std::to_string(kListedAt)},
                       opts);
  REQUIRE(r);
  INFO(r->err);
  REQUIRE(r->ok());
  return r->out;
}

const std::vector<deploy::EgressTarget> kTargets = {
    {"internet-canary", "203.0.113.40", 443, "tcp", "", "internet", "203.0.113.40"},
    {"canary-icmp", "203.0.113.40", 0, "icmp", "", "internet", "203.0.113.40"},
    {"metadata", "169.254.169.254", 80, "tcp", "", "metadata", ""},
    {"metadata-google", "169.254.169.254", 80, "http-google", "", "metadata", ""},
    {"canary6-udp", "2001:db8:100::40", 53, "udp", "", "internet", "2001:db8:100::40"},
};

// The agent as the hawk backend knows it: the ssh line's IPv4 address and the sandbox pod
// `hawk status` of the stand-in names (no IPv6 address: its IPv6 flows match by the pod).
const FlowSubject kAgent{"192.0.2.193", "", "sandbox-hs-abc123", "hs-abc123"};

const deploy::DropRecord* record_of(const deploy::DropView& v, const std::string& way_out) {
  for (const auto& r : v.records)
    if (r.way_out == way_out) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("the stand-in's hubble: the kernel's drop records as flows, dated by their timeouts", "[hawk]") {
  const HubbleFlows flows = parse_hubble_flows(standin_flows());
  CHECK(flows.malformed == 0);
  CHECK(flows.other == 0);
  REQUIRE(flows.flows.size() == 5);  // four drop-set elements and the first SSH connection
  // The earliest flow: the jumphost's first SSH connection (expires 23h59m40s of 1d).
  CHECK(flows.first_ms == kListedAt - 20000);
  CHECK(flows.flows.front().verdict == FlowVerdict::kForwarded);
  CHECK(flows.flows.front().traffic_direction == "INGRESS");
  CHECK(flows.flows.front().destination.pod_name == "sandbox-hs-abc123");
  CHECK(flows.flows.front().destination_port == 2222);
  for (std::size_t i = 1; i < flows.flows.size(); ++i) {
    const HubbleFlow& f = flows.flows[i];
    INFO(f.destination_ip);
    CHECK(f.verdict == FlowVerdict::kDropped);
    CHECK(f.drop_reason == "POLICY_DENIED");
    CHECK(f.traffic_direction == "EGRESS");
    CHECK(f.node_name == "standin-tier");
    CHECK(f.source.pod_name == "sandbox-hs-abc123");
    CHECK(f.source.namespace_ == "hs-abc123");
  }

  // The probe's window: 5 s before the listing until it. Every drop of the agent is in it,
  // named by its way out, at the time of its last drop; the SSH flow is no drop of it.
  const deploy::DropView view = select_drops(flows, kAgent, kTargets, kListedAt - 5000, kListedAt, false);
  INFO(view.note);
  CHECK(view.complete);
  REQUIRE(view.records.size() == 4);
  const auto* tcp = record_of(view, "internet-canary");
  REQUIRE(tcp);
  CHECK(tcp->unix_ms == kListedAt - 4500);
  CHECK(tcp->dropped);
  CHECK(tcp->source == "192.0.2.193");
  const auto* icmp = record_of(view, "canary-icmp");
  REQUIRE(icmp);
  CHECK(icmp->unix_ms == kListedAt - 3750);
  CHECK(icmp->proto == "icmp");
  // Metadata asked two ways on one port: the flow names neither, the rule matches each.
  CHECK_FALSE(record_of(view, "metadata"));
  CHECK_FALSE(record_of(view, "metadata-google"));
  const auto* metadata = record_of(view, "");
  REQUIRE(metadata);
  CHECK(metadata->destination == "169.254.169.254");
  CHECK(metadata->port == 80);
  CHECK(metadata->unix_ms == kListedAt - 4000);
  const auto* v6 = record_of(view, "canary6-udp");  // the IPv6 source, matched by the pod
  REQUIRE(v6);
  CHECK(v6->source == "2001:db8:200::193");
  CHECK(v6->unix_ms == kListedAt - 3000);

  // A window that opened before the first SSH connection: the flows do not reach back to it.
  const deploy::DropView early = select_drops(flows, kAgent, kTargets, kListedAt - 30000, kListedAt, false);
  CHECK_FALSE(early.complete);
  CHECK_THAT(early.note, Catch::Contains("start 10000 ms after"));
  // A window that closed before the last drops: those are not in it.
  const deploy::DropView before =
      select_drops(flows, kAgent, kTargets, kListedAt - 5000, kListedAt - 3900, false);
  CHECK(before.records.size() == 2);
  // Another sandbox's pod and address: none of these flows are its.
  const FlowSubject other{"192.0.2.194", "", "sandbox-hs-other", "hs-other"};
  CHECK(select_drops(flows, other, kTargets, kListedAt - 5000, kListedAt, false).records.empty());
}
