// Cilium Hubble flows as the drop point's witness on a deployment (docs/CONTRACTS.md §4.6):
// the parser on fixtures in `hubble observe --output json`'s shape, the selection of one
// sandbox's flows, the hubble: and node_image: profile sections, and HawkBackend::witness
// filling WitnessView::drops from a file and from a command.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/common/error.h"
#include "harness/deploy/hawk/hawk_backend.h"
#include "harness/deploy/hawk/hubble_flows.h"
#include "harness/scenario/scenario.h"

using namespace isoharness;
using namespace isoharness::deploy::hawk;

namespace {

const std::string kHubbleFixtures = std::string(ISOHARNESS_SOURCE_DIR) + "/tests/fixtures/hubble/";

std::string hubble_fixture(const std::string& name) {
  std::ifstream in(kHubbleFixtures + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr long long kHubbleT0 = 1796306400000;  // 2026-12-03T14:00:00Z

const std::vector<deploy::EgressTarget> kHubbleTargets = {
    {"internet-canary", "203.0.113.40", 443, "tcp", "", "internet", "203.0.113.40"},
    {"canary-icmp", "203.0.113.40", 0, "icmp", "", "internet", "203.0.113.40"},
    {"metadata", "169.254.169.254", 80, "tcp", "", "metadata", ""},
    {"target", "198.51.100.7", 443, "tcp", "", "internet", ""},
};

const FlowSubject kHubbleSandbox{"192.0.2.211", "", "agent-env-run1-default-0", "inspect-run1"};

const deploy::DropRecord* drop_for(const deploy::DropView& v, const std::string& way_out) {
  for (const auto& r : v.records)
    if (r.way_out == way_out) return &r;
  return nullptr;
}

const std::string kHubbleBase = R"(backend: hawk
runtime_classes: [gvisor]
hawk:
  cli: /opt/hawk
  human: alice
  jumphost_host_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIATa7TySBAxRWg7jZr8RowgcPkvoBS1hRj1AjCT4GERa"
)";

std::string hubble_profile_error(const std::string& section) {
  try {
    scenario::parse_deployment(kHubbleBase + section, "h.yaml");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

std::chrono::system_clock::time_point hubble_at_ms(long long ms) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

}  // namespace

TEST_CASE("hubble flows: the CLI's envelope and bare flows read; malformed and other lines counted",
          "[hawk]") {
  const HubbleFlows f = parse_hubble_flows(hubble_fixture("sandbox-window.jsonl"));
  CHECK(f.flows.size() == 11);  // every flow line, the wrong-typed one included
  CHECK(f.malformed == 1);
  CHECK(f.other == 1);  // node_status
  CHECK(f.lost_events == 0);
  CHECK_FALSE(f.truncated);
  const HubbleFlow& drop = f.flows[1];
  CHECK(drop.unix_ms == kHubbleT0 + 250);
  CHECK(drop.verdict == FlowVerdict::kDropped);
  CHECK(drop.drop_reason == "POLICY_DENIED");
  CHECK(drop.source_ip == "192.0.2.211");
  CHECK(drop.destination_ip == "203.0.113.40");
  CHECK(drop.ip_version == "IPv4");
  CHECK(drop.proto == "tcp");
  CHECK(drop.destination_port == 443);
  CHECK(drop.source.pod_name == "agent-env-run1-default-0");
  CHECK(drop.source.namespace_ == "inspect-run1");
  CHECK(drop.source.identity == 53310);
  CHECK(drop.source.labels.size() == 2);
  CHECK(drop.destination.labels == std::vector<std::string>{"reserved:world"});
  CHECK(drop.traffic_direction == "EGRESS");
  CHECK(drop.type == "L3_L4");
  CHECK(drop.node_name == "ip-10-0-1-1");
  CHECK(f.flows[2].node_name == "ip-10-0-1-1");  // from the envelope when the flow has none
  CHECK(f.flows[4].proto == "icmp");
  CHECK(f.flows[5].is_reply);
  // The line of wrong types: a flow with nothing readable in it, not an exception.
  const HubbleFlow& odd = f.flows[9];
  CHECK(odd.unix_ms == -1);
  CHECK(odd.verdict == FlowVerdict::kUnknown);
  CHECK(odd.source_ip.empty());
  CHECK(odd.proto.empty());
  CHECK(odd.source.pod_name.empty());
  CHECK_FALSE(odd.is_reply);
  CHECK(f.first_ms == kHubbleT0 - 1900);
  CHECK(f.last_ms == kHubbleT0 + 5900);
}

TEST_CASE("hubble flows: bounded in bytes and lines, a cut last line left unread", "[hawk]") {
  const std::string text = hubble_fixture("sandbox-window.jsonl");
  const HubbleFlows by_lines = parse_hubble_flows(text, {.max_bytes = 1 << 20, .max_lines = 3});
  CHECK(by_lines.truncated);
  CHECK(by_lines.flows.size() == 3);
  const HubbleFlows by_bytes =
      parse_hubble_flows(text, {.max_bytes = text.find('\n') + 20, .max_lines = 100});
  CHECK(by_bytes.truncated);
  CHECK(by_bytes.flows.size() == 1);
  CHECK(by_bytes.malformed == 0);  // the cut second line is not read as a malformed one
  CHECK(parse_hubble_flows("").flows.empty());
  CHECK(parse_hubble_flows("[1,2]\n\"x\"\n{\n").malformed == 3);
}

TEST_CASE("hubble flows: RFC 3339 times, with fractions and offsets", "[hawk]") {
  CHECK(parse_rfc3339_ms("2026-12-03T14:00:00Z") == kHubbleT0);
  CHECK(parse_rfc3339_ms("2026-12-03T14:00:00.5Z") == kHubbleT0 + 500);
  CHECK(parse_rfc3339_ms("2026-12-03T14:00:00.123456789Z") == kHubbleT0 + 123);
  CHECK(parse_rfc3339_ms("2026-12-03T15:30:00+01:30") == kHubbleT0);
  CHECK(parse_rfc3339_ms("2026-12-03T12:00:00-02:00") == kHubbleT0);
  CHECK(parse_rfc3339_ms("2026-12-03 14:00:00Z") == -1);
  CHECK(parse_rfc3339_ms("2026-12-03T14:00:00") == -1);
  CHECK(parse_rfc3339_ms("2026-13-03T14:00:00Z") == -1);
  CHECK(parse_rfc3339_ms("2026-12-03T14:00:00Zjunk") == -1);
  CHECK(parse_rfc3339_ms("") == -1);
}

TEST_CASE("hubble drops: one sandbox's outgoing flows, policy drops and forwards, named by way out",
          "[hawk]") {
  const HubbleFlows f = parse_hubble_flows(hubble_fixture("sandbox-window.jsonl"));
  const deploy::DropView v =
      select_drops(f, kHubbleSandbox, kHubbleTargets, kHubbleT0, kHubbleT0 + 2000, true);
  CHECK(v.complete);
  CHECK(v.witness == "hubble");
  // The SYN to the canary, the ICMP echo to it, the metadata SYN (known by pod name only)
  // and the forwarded SYN to the allowed target. Not: the reply, another pod's drop, a drop
  // for another reason, an ingress drop, flows outside the window.
  REQUIRE(v.records.size() == 4);
  const auto* canary = drop_for(v, "internet-canary");
  REQUIRE(canary);
  CHECK(canary->dropped);
  CHECK(canary->reason == "POLICY_DENIED");
  CHECK(canary->proto == "tcp");
  CHECK(canary->port == 443);
  CHECK(canary->unix_ms == kHubbleT0 + 250);
  const auto* icmp = drop_for(v, "canary-icmp");
  REQUIRE(icmp);
  CHECK(icmp->dropped);
  const auto* metadata = drop_for(v, "metadata");
  REQUIRE(metadata);
  CHECK(metadata->source == "192.0.2.214");
  CHECK(metadata->dropped);
  const auto* target = drop_for(v, "target");
  REQUIRE(target);
  CHECK_FALSE(target->dropped);
  CHECK(target->reason == "FORWARDED");

  // Known by its address only: the metadata drop (another source address) is not its.
  CHECK(select_drops(f, {"192.0.2.211", "", "", ""}, kHubbleTargets, kHubbleT0, kHubbleT0 + 2000, true)
            .records.size() == 3);
  // Known by nothing Hubble shows: no records.
  CHECK(select_drops(f, {"192.0.2.215", "", "nobody", "nowhere"}, kHubbleTargets, kHubbleT0, kHubbleT0 + 2000,
                     true)
            .records.empty());
}

TEST_CASE("hubble drops: flows that do not cover the window, were cut or lost events are not judged on",
          "[hawk]") {
  const HubbleFlows f = parse_hubble_flows(hubble_fixture("sandbox-window.jsonl"));
  const auto early =
      select_drops(f, kHubbleSandbox, kHubbleTargets, kHubbleT0 - 5000, kHubbleT0 + 2000, true);
  CHECK_FALSE(early.complete);
  CHECK_THAT(early.note, Catch::Contains("start"));
  const auto late = select_drops(f, kHubbleSandbox, kHubbleTargets, kHubbleT0, kHubbleT0 + 9000, true);
  CHECK_FALSE(late.complete);
  CHECK_THAT(late.note, Catch::Contains("end"));
  CHECK(select_drops(f, kHubbleSandbox, kHubbleTargets, kHubbleT0, kHubbleT0 + 9000, false)
            .complete);  // a command covers the end
  // The clock slack widens what is attributed, not what must be watched: flows from 1,900 ms
  // before T0 to 5,900 ms after cover a probe of [T0 - 1,800, T0 + 5,800] asked with 600 ms
  // of slack, but not one of [T0 - 2,000, T0 + 6,000] asked with 400 ms.
  CHECK(select_drops(f, kHubbleSandbox, kHubbleTargets, kHubbleT0 - 2400, kHubbleT0 + 6400, true, 600)
            .complete);
  const auto slack_start =
      select_drops(f, kHubbleSandbox, kHubbleTargets, kHubbleT0 - 2400, kHubbleT0 + 5000, true, 400);
  CHECK_FALSE(slack_start.complete);
  CHECK_THAT(slack_start.note, Catch::Contains("start 100 ms after"));
  const auto slack_end =
      select_drops(f, kHubbleSandbox, kHubbleTargets, kHubbleT0 - 1000, kHubbleT0 + 6400, true, 400);
  CHECK_FALSE(slack_end.complete);
  CHECK_THAT(slack_end.note, Catch::Contains("end 100 ms before"));
  const auto lost = select_drops(parse_hubble_flows(hubble_fixture("lost-events.jsonl")), kHubbleSandbox,
                                 kHubbleTargets, kHubbleT0, kHubbleT0 + 200, false);
  CHECK_FALSE(lost.complete);
  CHECK_THAT(lost.note, Catch::Contains("lost-events"));
  const auto cut = select_drops(
      parse_hubble_flows(hubble_fixture("sandbox-window.jsonl"), {.max_bytes = 1 << 20, .max_lines = 4}),
      kHubbleSandbox, kHubbleTargets, kHubbleT0, kHubbleT0 + 100, false);
  CHECK_FALSE(cut.complete);
  const auto none = select_drops(parse_hubble_flows("garbage\n"), kHubbleSandbox, kHubbleTargets, kHubbleT0,
                                 kHubbleT0 + 100, false);
  CHECK_FALSE(none.complete);
}

TEST_CASE("deployment profile: hubble: and node_image: sections, checked", "[hawk]") {
  auto p = scenario::parse_deployment(
      kHubbleBase +
          "hubble: { command: [hubble, observe, --output, json], timeout_s: 5, lead_s: 30 }\n"
          "node_image: { name: eks-al2023-1.31, runc_version: 1.2.8, runc_package: 1.2.8-1.amzn2023 }\n",
      "h.yaml");
  REQUIRE(p.hubble);
  CHECK(p.hubble->command == std::vector<std::string>{"hubble", "observe", "--output", "json"});
  CHECK(p.hubble->timeout_s == 5);
  CHECK(p.hubble->lead_s == 30);
  REQUIRE(p.node_image);
  CHECK(p.node_image->runc_version == "1.2.8");
  CHECK(p.node_image->runc_package == "1.2.8-1.amzn2023");
  CHECK(scenario::parse_deployment(kHubbleBase + "hubble: { file: /var/flows.jsonl }\n", "h.yaml")
            .hubble->file == "/var/flows.jsonl");
  CHECK_THAT(hubble_profile_error("hubble: { command: [hubble], file: /x }\n"),
             Catch::Contains("exactly one"));
  CHECK_THAT(hubble_profile_error("hubble: {}\n"), Catch::Contains("exactly one"));
  CHECK_THAT(hubble_profile_error("hubble: { file: relative.jsonl }\n"), Catch::Contains("absolute path"));
  CHECK_THAT(hubble_profile_error("hubble: { command: \"hubble observe\" }\n"),
             Catch::Contains("list of 1 to 64 words"));
  CHECK_THAT(hubble_profile_error("hubble: { command: [hubble], timeout_s: 0 }\n"),
             Catch::Contains("timeout_s"));
  CHECK_THAT(hubble_profile_error("hubble: { command: [hubble], shell: yes }\n"),
             Catch::Contains("unknown key 'shell'"));
  CHECK_THAT(hubble_profile_error("node_image: { name: x }\n"), Catch::Contains("runc_version is required"));
  CHECK_THAT(hubble_profile_error("node_image: { name: x, runc_version: \"1.2 ; rm\" }\n"),
             Catch::Contains("node_image.runc_version must be the runc version the image ships"));
}

TEST_CASE("deployment profile: node_image declares the rest of the runtime stack, each optional", "[hawk]") {
  const auto p = scenario::parse_deployment(
      kHubbleBase +
          "node_image: { name: gpu-1, runc_version: 1.3.5, containerd_version: 1.7.31,\n"
          "  containerd_package: 1.7.31-0ubuntu1, runsc_version: release-20261101.0,\n"
          "  nvidia_container_toolkit_version: 1.17.7, nvidia_container_toolkit_package: 1.17.7-1 }\n",
      "h.yaml");
  REQUIRE(p.node_image);
  CHECK(p.node_image->containerd_version == "1.7.31");
  CHECK(p.node_image->containerd_package == "1.7.31-0ubuntu1");
  CHECK(p.node_image->runsc_version == "release-20261101.0");
  CHECK(p.node_image->nvidia_container_toolkit_version == "1.17.7");
  CHECK(p.node_image->nvidia_container_toolkit_package == "1.17.7-1");
  CHECK(p.node_image->crun_version.empty());
  // A node whose OCI runtime is crun needs no runc_version.
  const auto crun =
      scenario::parse_deployment(kHubbleBase + "node_image: { name: c, crun_version: \"1.28\" }\n", "h.yaml");
  REQUIRE(crun.node_image);
  CHECK(crun.node_image->crun_version == "1.28");
  CHECK(crun.node_image->runc_version.empty());
  // Unquoted, YAML makes 1.28 a number: refused, saying to quote it, rather than read as "1.28".
  CHECK_THAT(
      hubble_profile_error("node_image: { name: c, crun_version: 1.28 }\n"),
      Catch::Contains("node_image.crun_version must be quoted") && Catch::Contains("1.10 would become 1.1"));
  CHECK_THAT(
      hubble_profile_error("node_image: { name: x, runc_version: 1.3.6, containerd_package: 1.7.31-1 }\n"),
      Catch::Contains("node_image.containerd_package needs containerd_version beside it"));
  CHECK_THAT(hubble_profile_error("node_image: { name: x, runc_version: 1.3.6, runsc_version: [1] }\n"),
             Catch::Contains("node_image.runsc_version must be the runsc version"));
  CHECK_THAT(hubble_profile_error("node_image: { name: x, runc_version: 1.3.6, docker_version: 1 }\n"),
             Catch::Contains("unknown key 'docker_version'"));
}

TEST_CASE("hawk backend witness: drops from Hubble flows, by file and by command, judged as the flows say",
          "[hawk]") {
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-hubble-unit";
  std::filesystem::create_directories(dir);
  HawkOptions o;
  o.work_dir = dir;
  o.targets = kHubbleTargets;
  std::vector<std::string> asked;
  std::string answer = hubble_fixture("sandbox-window.jsonl");
  o.runner = [&](const std::vector<std::string>& argv, const RunOptions& run) -> Expected<RunResult> {
    asked = argv;
    CHECK(run.max_output == std::size_t{64} << 20);
    RunResult r;
    r.exited = true;
    r.exit_code = 0;
    r.out = answer;
    return r;
  };
  deploy::SandboxHandle h;
  h.route.sandbox.host = "192.0.2.211";
  h.facts.sandbox_pod = deploy::PodRef{"agent-env-run1-default-0", "inspect-run1"};

  // The command: the window appended, the canary's SYN dropped by policy.
  HawkBackend by_command(
      scenario::parse_deployment(kHubbleBase + "hubble: { command: [hubble, observe, --output, json] }\n",
                                 "h.yaml"),
      o);
  auto view = by_command.witness(h, "0123456789abcdef", hubble_at_ms(kHubbleT0 + 1000),
                                 hubble_at_ms(kHubbleT0 + 1000));
  REQUIRE(view);
  CHECK_FALSE(view->complete);  // no witness: section, so arrivals are unobserved
  REQUIRE(view->drops);
  CHECK(view->drops->complete);
  CHECK(asked == std::vector<std::string>{"hubble", "observe", "--output", "json", "--since",
                                          "2026-12-03T13:59:00.000Z", "--until", "2026-12-03T14:00:02.000Z"});
  REQUIRE(drop_for(*view->drops, "internet-canary"));
  CHECK(drop_for(*view->drops, "internet-canary")->dropped);

  // The same run, where the flows say the canary's SYN was forwarded: so does the view.
  answer = hubble_fixture("sandbox-window.jsonl");
  const std::string dropped = "\"verdict\":\"DROPPED\",\"drop_reason\":133";
  answer.replace(answer.find(dropped), dropped.size(), "\"verdict\":\"FORWARDED\"");
  view = by_command.witness(h, "", hubble_at_ms(kHubbleT0 + 1000), hubble_at_ms(kHubbleT0 + 1000));
  REQUIRE(drop_for(*view->drops, "internet-canary"));
  CHECK_FALSE(drop_for(*view->drops, "internet-canary")->dropped);

  // A command that fails: the drops are not judged on.
  o.runner = [](const auto&, const auto&) -> Expected<RunResult> {
    RunResult r;
    r.exited = true;
    r.exit_code = 1;
    r.err = "failed to connect to 'localhost:4245'";
    return r;
  };
  view =
      HawkBackend(
          scenario::parse_deployment(kHubbleBase + "hubble: { command: [hubble, observe] }\n", "h.yaml"), o)
          .witness(h, "", hubble_at_ms(kHubbleT0), hubble_at_ms(kHubbleT0));
  REQUIRE(view->drops);
  CHECK_FALSE(view->drops->complete);
  CHECK_THAT(view->drops->note, Catch::Contains("could not be read") && Catch::Contains("exit 1"));

  // A file: it must span the window itself.
  HawkBackend by_file(
      scenario::parse_deployment(
          kHubbleBase + "hubble: { file: " + kHubbleFixtures + "sandbox-window.jsonl }\n", "h.yaml"),
      o);
  view = by_file.witness(h, "", hubble_at_ms(kHubbleT0 + 1000), hubble_at_ms(kHubbleT0 + 1000));
  CHECK(view->drops->complete);
  CHECK(view->drops->records.size() == 4);
  view = by_file.witness(h, "", hubble_at_ms(kHubbleT0 + 8000), hubble_at_ms(kHubbleT0 + 8000));
  CHECK_FALSE(view->drops->complete);
  // A sandbox Hubble cannot know: nothing to match on.
  deploy::SandboxHandle named;
  named.route.sandbox.host = "sandbox.example";
  view = by_file.witness(named, "", hubble_at_ms(kHubbleT0 + 1000), hubble_at_ms(kHubbleT0 + 1000));
  CHECK_FALSE(view->drops->complete);
  CHECK_THAT(view->drops->note, Catch::Contains("no pod address or pod name"));
  CHECK_FALSE(HawkBackend(scenario::parse_deployment(kHubbleBase, "h.yaml"), o)
                  .witness(h, "", hubble_at_ms(kHubbleT0), hubble_at_ms(kHubbleT0)));
  std::filesystem::remove_all(dir);
}
