// Cilium Hubble flows as the drop point's witness on a deployment (docs/CONTRACTS.md §4.6).
// `hubble observe --output json` prints JSON Lines: each line a flow object, or the CLI's
// envelope {"flow": {...}, "node_name": ..., "time": ...}; other envelopes (lost_events,
// node_status, agent_event, debug_event) may appear between them. The fields read are the
// public flow API's (cilium api/v1/flow/flow.proto, JSON names as protojson prints them):
//
//   time (RFC 3339), verdict (FORWARDED, DROPPED, ERROR, AUDIT, REDIRECTED, TRACED,
//   TRANSLATED), drop_reason_desc (POLICY_DENIED, POLICY_DENY, ...), IP.source,
//   IP.destination, IP.ipVersion, l4.TCP.destination_port, l4.UDP.destination_port,
//   l4.ICMPv4, l4.ICMPv6, source/destination {pod_name, namespace, identity, labels},
//   traffic_direction (EGRESS, INGRESS), is_reply, Type, node_name.
//
// The text comes from the platform: the parse is bounded (lines, bytes), every value is
// read with a typed reader that takes a wrong type as absent, and a line that is not a JSON
// object is counted as malformed, never thrown on. Parsing is separate from I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/deploy/backend.h"

namespace isoharness::deploy::hawk {

enum class FlowVerdict { kUnknown, kForwarded, kDropped, kError, kAudit, kRedirected, kTraced, kTranslated };

// "FORWARDED" and so on; kUnknown for anything else (VERDICT_UNKNOWN, a number, a newer word).
FlowVerdict flow_verdict_from(std::string_view word);

struct FlowEndpoint {
  std::string pod_name;
  std::string namespace_;
  long long identity = 0;           // Cilium's security identity; 0 when not given
  std::vector<std::string> labels;  // at most kMaxFlowLabels
};

struct HubbleFlow {
  long long unix_ms = -1;  // -1: no readable time (such a flow is never in a window)
  FlowVerdict verdict = FlowVerdict::kUnknown;
  std::string drop_reason;  // drop_reason_desc, e.g. "POLICY_DENIED"
  std::string source_ip;
  std::string destination_ip;
  std::string ip_version;  // "IPv4", "IPv6" or ""
  std::string proto;       // "tcp", "udp", "icmp", "icmp6", "" (another or none)
  int destination_port = 0;
  FlowEndpoint source;
  FlowEndpoint destination;
  std::string traffic_direction;  // "EGRESS", "INGRESS" or ""
  bool is_reply = false;
  std::string type;  // "L3_L4", "L7", ...
  std::string node_name;
};

struct HubbleLimits {
  std::size_t max_bytes = std::size_t{64} << 20;
  std::size_t max_lines = 500000;
};

inline constexpr std::size_t kMaxFlowLabels = 32;
inline constexpr std::size_t kMaxFlowField = 256;

struct HubbleFlows {
  std::vector<HubbleFlow> flows;
  std::size_t malformed = 0;    // lines that are not a JSON object
  std::size_t other = 0;        // objects that are not flows (node_status, agent_event, ...)
  std::size_t lost_events = 0;  // lost_events envelopes: Hubble dropped flows it should have shown
  bool truncated = false;       // the text went past a bound; what lies beyond was not read
  long long first_ms = -1;      // earliest and latest flow time seen (any sandbox), -1 if none
  long long last_ms = -1;
};

HubbleFlows parse_hubble_flows(std::string_view text, const HubbleLimits& limits = {});

// "2024-05-01T12:34:56.123456789Z" or with a "+hh:mm"/"-hh:mm" offset, to unix ms; -1 when
// it is not RFC 3339.
long long parse_rfc3339_ms(std::string_view s);

// Who the sandbox is to Hubble: its pod's address(es) and/or its pod name and namespace.
struct FlowSubject {
  std::string address;
  std::string address6;
  std::string pod_name;
  std::string namespace_;
};

// A drop reason that says the network policy denied the packet.
bool policy_denied(std::string_view reason);

// The drop point's record of one sandbox in [from_ms, to_ms]: its outgoing flows (not
// replies, not ingress), a DROPPED flow with a policy-denied reason as dropped, a FORWARDED
// one as forwarded; each named after the egress target whose address (host or
// witness_address), port and protocol it matches. Other verdicts and other drop reasons are
// not evidence of the policy and are left out. complete is false with a note when the
// flows are truncated, Hubble lost events, or the flows do not reach back to the probe's own
// start, from_ms + cover_slack_ms (and, with `need_end`, forward to its own end, to_ms -
// cover_slack_ms). The window's clock slack widens what is attributed, not what must be
// watched: the sandbox's SSH session, which Hubble sees, comes before the probe it runs,
// while the slack before the probe may reach back past the sandbox's first packet.
DropView select_drops(const HubbleFlows& flows, const FlowSubject& subject,
                      const std::vector<EgressTarget>& targets, long long from_ms, long long to_ms,
                      bool need_end, long long cover_slack_ms = 0);

}  // namespace isoharness::deploy::hawk
