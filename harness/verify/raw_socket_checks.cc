// Raw and packet sockets: a path around every port-based rule, open to a process
// that holds CAP_NET_RAW. The probe tries to create an IPv4 raw ICMP socket and a packet
// socket (probes/core/datagram_egress.cc, socket_abilities) and reports "ok" or the errno;
// the check fails when either opens while the plan's capability set leaves out CAP_NET_RAW.
// Where the plan keeps it (the runtime's default set under runc), an open socket is what
// the plan gives and a refused one is stricter than planned: both pass, the observation
// shown. gVisor's default set has no CAP_NET_RAW, and runsc serves raw sockets only with
// --net-raw; its host-in-netns network serves no packet sockets at all.
#include <fmt/format.h>

#include "harness/verify/checks_internal.h"

namespace isoharness::verify::detail {
namespace {

// The planned effective set (cap_eff, or the runtime's default set when it is null).
std::optional<unsigned long long> raw_planned_mask(const VerifyInput& in, std::string& text) {
  const auto* cap_eff = planned(in, "cap_eff");
  const auto* cap_default = planned(in, "cap_eff_default");
  const nlohmann::json* chosen = nullptr;
  if (cap_eff && cap_eff->is_string()) chosen = cap_eff;
  if (cap_eff && cap_eff->is_null() && cap_default && cap_default->is_string()) chosen = cap_default;
  if (!chosen) return std::nullopt;
  text = chosen->get<std::string>();
  try {
    std::size_t used = 0;
    const unsigned long long mask = std::stoull(text, &used, 16);
    if (used == text.size()) return mask;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

void check_raw_sockets(const VerifyInput& in, std::vector<CheckResult>& out) {
  const std::string control = "raw_sockets";
  std::string planned_text;
  const auto mask = raw_planned_mask(in, planned_text);
  if (!mask) {
    out.push_back(unplanned(control, "cap_eff"));
    return;
  }
  const auto* eg = observation(in.posture, "egress");
  const nlohmann::json* sockets =
      eg && eg->contains("sockets") && (*eg)["sockets"].is_object() ? &(*eg)["sockets"] : nullptr;
  const auto raw = get_string(sockets, "raw_icmp");
  const auto packet = get_string(sockets, "packet");
  const bool net_raw = (*mask >> capability_bit("CAP_NET_RAW")) & 1ULL;
  const std::string expected = net_raw ? "raw and packet sockets allowed (CAP_NET_RAW planned)"
                                       : "raw and packet sockets refused (no CAP_NET_RAW planned)";
  if (!raw || !packet) {
    out.push_back(missing(control, in.posture, "egress", expected));
    return;
  }
  const std::string observed =
      fmt::format("raw ICMP socket: {}; packet socket: {}", bounded(*raw, 200), bounded(*packet, 200));
  const bool opened = *raw == "ok" || *packet == "ok";
  std::string reason;
  if (!net_raw && opened)
    reason = "raw_sockets: a raw or packet socket opened although the plan's capabilities (" + planned_text +
             ") leave out CAP_NET_RAW: a way around every port-based egress rule";
  else if (!net_raw)
    reason = "neither socket opens: CAP_NET_RAW is not held";
  else if (opened)
    reason = "the plan keeps CAP_NET_RAW (" + planned_text + "), and a raw or packet socket opens";
  else
    reason =
        "stricter than planned: CAP_NET_RAW is planned but neither socket opens (gVisor without --net-raw)";
  out.push_back(make(control, net_raw || !opened, expected, observed, reason,
                     observation_evidence(in.posture, "egress")));
}

}  // namespace isoharness::verify::detail
