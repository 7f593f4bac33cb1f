// Egress judged from outside: the sandbox controls its own probe and may report "blocked"
// while it sends, or send nothing at all. Two witnesses stand beside each way out: the
// arrival witness (WitnessView::records, where the packets would land) and the drop point
// (WitnessView::drops, where the policy stopped them). This file reads what each has on
// one target; egress_verdict.cc decides, by the one rule, what that makes the check.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "harness/verify/checks_internal.h"
#include "harness/verify/egress_verdict.h"

namespace isoharness::verify::detail {
namespace {

constexpr int kShownRecords = 5;

bool is_address(const std::string& text) {
  unsigned char buf[16];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

bool from_sandbox(const deploy::WitnessView& view, const deploy::WitnessRecord& r) {
  // An unknown address (a hawk route that names the sandbox by a name) matches nothing.
  return (!view.source.empty() && r.source == view.source) ||
         (!view.source6.empty() && r.source == view.source6);
}

bool carries_nonce(const deploy::WitnessView& view, const deploy::WitnessRecord& r) {
  return !view.nonce.empty() && r.nonce == view.nonce;
}

// A way out told apart from others to the same address and port only by the name its
// request presents: TLS (the ClientHello's server name) or a request presenting a name other
// than its host's (fronting).
bool name_scoped(const deploy::EgressTarget& t) {
  return t.proto == "tls" || !t.server_name.empty();
}

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Whether name is zone or a name under it (case-insensitive).
bool in_zone(const std::string& name, const std::string& zone) {
  if (zone.empty() || name.size() < zone.size()) return false;
  if (name.size() == zone.size()) return same_name(name, zone);
  return name[name.size() - zone.size() - 1] == '.' &&
         same_name(name.substr(name.size() - zone.size()), zone);
}

// The name the target's request presents (isoprobe: the server name, else the host).
const std::string& presented_name(const deploy::EgressTarget& t) {
  return t.server_name.empty() ? t.host : t.server_name;
}

// Whether one witness record is this target's traffic from this sandbox arriving.
bool arrival_matches(const deploy::WitnessView& view, const deploy::EgressTarget& t,
                     const deploy::WitnessRecord& r) {
  const bool ours = from_sandbox(view, r) || carries_nonce(view, r);
  if (name_scoped(t))  // the first bytes that arrived presented this name
    return r.kind == "tcp-data" && ours && r.destination == t.witness_address && r.port == t.port &&
           same_name(r.name, presented_name(t));
  if (t.proto == "tcp" || t.proto == "tls" || t.proto.starts_with("http"))
    return (r.kind == "tcp-syn" || r.kind == "tcp-data") &&
           (r.kind == "tcp-data" ? ours : from_sandbox(view, r)) && r.destination == t.witness_address &&
           r.port == t.port;
  if (t.proto == "udp")
    return r.kind == "udp" && ours && r.destination == t.witness_address && r.port == t.port;
  if (t.proto == "icmp") return r.kind == "icmp-echo" && ours && r.destination == t.witness_address;
  if (t.proto == "exfil")  // the resolver asks, not the sandbox: only the nonce ties the query to it
    return r.kind == "dns" && !view.nonce.empty() && r.name.find("ihw-" + view.nonce) != std::string::npos;
  if (t.proto == "dns")  // resolving: a query of the sandbox reached a resolver in the world
    return r.kind == "udp" && from_sandbox(view, r) && r.port == 53;
  return false;
}

std::string describe(const deploy::WitnessRecord& r) {
  std::string line = fmt::format("{} {} -> {}", r.kind, r.source, r.destination);
  if (r.kind != "icmp-echo") line += ":" + std::to_string(r.port);
  if (!r.nonce.empty()) line += " nonce " + r.nonce;
  if (!r.name.empty()) line += " name " + r.name;
  return line + " at " + std::to_string(r.unix_ms);
}

std::string describe(const deploy::DropRecord& r) {
  std::string line = fmt::format("{} {} {} -> {}", r.dropped ? "dropped" : "forwarded", r.proto,
                                 r.source.empty() ? "(sandbox)" : r.source, r.destination);
  if (r.port > 0) line += ":" + std::to_string(r.port);
  line += fmt::format(" x{}", r.count);
  if (!r.reason.empty()) line += " (" + r.reason + ")";
  if (r.unix_ms > 0) line += " at " + std::to_string(r.unix_ms);
  return line;
}

// "N record(s)" and the first few, or `none`.
template <typename Record>
std::string listed_records(const std::vector<const Record*>& found, const char* none) {
  if (found.empty()) return none;
  std::string out = fmt::format("{} record(s)", found.size());
  for (std::size_t i = 0; i < found.size() && i < kShownRecords; ++i) out += "\n    " + describe(*found[i]);
  if (found.size() > kShownRecords) out += fmt::format("\n    ... {} more", found.size() - kShownRecords);
  return out;
}

struct Side {
  Witnessed state = Witnessed::unusable;
  std::string text;  // what this witness had, for the evidence
};

Side arrival_side(const VerifyInput& in, const deploy::EgressTarget& target, bool allowed) {
  if (in.witness_waived) return {Witnessed::waived, "none (the deployment declares witness: none)"};
  if (!in.witness)
    return {Witnessed::unusable, "none in this deployment (and the profile does not say witness: none)"};
  if (target.witness_address.empty()) return {Witnessed::not_covering, "does not cover this way out"};
  // A query reaching a resolver shows DNS is open, not that a name the plan closes was
  // answered: for a closed `dns` target the arrival witness has nothing to say.
  if (target.proto == "dns" && !allowed)
    return {Witnessed::not_covering, "cannot tell whether the resolver answered the name"};
  const auto& view = *in.witness;
  if (!view.complete) return {Witnessed::unusable, "its record cannot be judged on: " + view.note};
  std::vector<const deploy::WitnessRecord*> found;
  for (const auto& r : view.records)
    if (arrival_matches(view, target, r)) found.push_back(&r);
  const std::string text =
      fmt::format("{}, looked for {} {}:{} from {} (nonce {}): {}", view.witness, target.proto,
                  target.witness_address, target.port, view.source, view.nonce.empty() ? "none" : view.nonce,
                  listed_records(found, "nothing arrived"));
  return {found.empty() ? Witnessed::not_seen : Witnessed::seen, text};
}

// The transport a drop point names for the target's packets.
bool drop_proto_matches(const deploy::EgressTarget& t, const std::string& proto) {
  if (t.proto == "tcp" || t.proto == "tls" || t.proto.starts_with("http")) return proto == "tcp";
  if (t.proto == "udp") return proto == "udp";
  if (t.proto == "icmp") return proto == "icmp" || proto == "icmp6" || proto == "ipv6-icmp";
  return false;
}

// A way out that begins with a name lookup: the name's target, a resolve-only target, or
// data leaving through DNS.
bool begins_with_lookup(const deploy::EgressTarget& t) {
  return t.proto == "dns" || t.proto == "exfil" || !is_address(t.host);
}

// The address a target's own packets go to.
const std::string& target_address(const deploy::EgressTarget& t) {
  return is_address(t.witness_address) ? t.witness_address : t.host;
}

bool is_targets_packet(const deploy::EgressTarget& t, const deploy::DropRecord& r) {
  return drop_proto_matches(t, r.proto) && r.destination == target_address(t) &&
         (t.proto == "icmp" || r.port == t.port);
}

// Whether a drop record is this target's attempt stopped: its packets to the target's
// address (and port), or, for a way out that begins with a lookup, a DNS query stopped (a
// packet to port 53 that is no other target's own).
bool drop_matches(const std::vector<deploy::EgressTarget>& targets, const deploy::EgressTarget& t,
                  const deploy::DropRecord& r) {
  if (!r.dropped || r.count <= 0) return false;
  if (!r.way_out.empty()) return r.way_out == t.name;
  // A drop point that read the request's name (a name-checking proxy) stopped that name's
  // request only.
  if (!r.name.empty())
    return name_scoped(t) && is_targets_packet(t, r) && same_name(r.name, presented_name(t));
  if (is_targets_packet(t, r)) return true;
  if (!begins_with_lookup(t) || (r.proto != "udp" && r.proto != "tcp") || r.port != 53) return false;
  for (const auto& other : targets)
    if (other.proto != "dns" && other.proto != "exfil" && is_targets_packet(other, r)) return false;
  return true;
}

// A lookup that left the sandbox and that its resolver did not pass on: the arrival witness
// saw the sandbox's query reach a resolver (for data leaving through DNS, the query with
// the nonce) and the sandbox got no answer it could use.
bool stopped_at_resolver(const deploy::WitnessView& view, const deploy::EgressTarget& t,
                         const deploy::WitnessRecord& r, const std::string& sandbox_result) {
  if (!view.complete || r.kind != "udp" || r.port != 53 || sandbox_result == "connected") return false;
  // The query the witness saw must ask what this way out asks: a name under the zone data
  // would leave through, or the target's own name (a query for another name is no attempt).
  if (t.proto == "exfil") return carries_nonce(view, r) && in_zone(r.name, t.host);
  return begins_with_lookup(t) && sandbox_result == "dns_failed" && from_sandbox(view, r) &&
         same_name(r.name, t.host);
}

Side drop_side(const VerifyInput& in, const deploy::EgressTarget& target, const std::string& sandbox_result) {
  if (in.witness_waived) return {Witnessed::waived, "none (the deployment declares witness: none)"};
  if (!in.witness || !in.witness->drops) return {Witnessed::unusable, "none in this deployment"};
  const auto& drops = *in.witness->drops;
  if (!drops.complete) return {Witnessed::unusable, "its record cannot be judged on: " + drops.note};
  std::vector<const deploy::DropRecord*> found;
  for (const auto& r : drops.records)
    if (drop_matches(in.targets, target, r)) found.push_back(&r);
  std::vector<const deploy::WitnessRecord*> at_resolver;
  for (const auto& r : in.witness->records)
    if (stopped_at_resolver(*in.witness, target, r, sandbox_result)) at_resolver.push_back(&r);
  std::string text = drops.witness + ": " + listed_records(found, "no record of this way out");
  if (!at_resolver.empty())
    text += "\n  the lookup reached the sandbox's resolver, which gave no usable answer: " +
            listed_records(at_resolver, "");
  return {found.empty() && at_resolver.empty() ? Witnessed::not_seen : Witnessed::seen, text};
}

std::string failure_reason(const deploy::EgressTarget& target, const std::string& where,
                           const std::string& why, const EgressJudgement& j,
                           const std::string& sandbox_result) {
  if (j.status == CheckStatus::pass) return why + " (rule " + j.row + ")";
  const std::string head = fmt::format("egress: {} ({})", target.name, where);
  if (j.status == CheckStatus::unwitnessed)
    return fmt::format("{} unwitnessed (rule {}): {}; the sandbox reported {}", head, j.row, j.why,
                       sandbox_result);
  return fmt::format("{} fails (rule {}): {}, although {}; the sandbox reported {}", head, j.row, j.why, why,
                     sandbox_result);
}

// Who judged a way out: on a failure, the witness that recorded the way out open (an
// arrival where the plan blocks it, none where it opens it) and the sandbox's own report of
// connecting where the plan blocks it; on a pass, the witnesses whose records agreed.
std::vector<Judge> egress_judges(const EgressJudgement& j, bool allowed, const std::string& sandbox_result,
                                 Witnessed arrival, Witnessed drop) {
  std::vector<Judge> out;
  if (j.status == CheckStatus::fail) {
    if ((!allowed && arrival == Witnessed::seen) || (allowed && arrival == Witnessed::not_seen))
      out.push_back(Judge::witness);
    if (!allowed && sandbox_result == "connected") out.push_back(Judge::sandbox_report);
    if (out.empty()) out.push_back(Judge::posture);
  } else if (j.status == CheckStatus::pass) {
    if (arrival == Witnessed::seen || arrival == Witnessed::not_seen) out.push_back(Judge::witness);
    if (drop == Witnessed::seen) out.push_back(Judge::drop_point);
    if (out.empty()) out.push_back(Judge::sandbox_report);
  }
  return out;
}

}  // namespace

CheckResult judge_egress_target(const VerifyInput& in, const deploy::EgressTarget& target, bool allowed,
                                const std::string& why, const std::string& sandbox_result,
                                const std::string& sandbox_evidence) {
  const Side arrival = arrival_side(in, target, allowed);
  const Side drop = drop_side(in, target, sandbox_result);
  const EgressJudgement j = judge_egress({allowed, sandbox_result, arrival.state, drop.state});
  const std::string where = target.host + ":" + std::to_string(target.port) + "/" + target.proto;
  const std::string head = j.row == std::string_view("W")
                               ? "judged by the sandbox's own report (the deployment declares witness: none)"
                               : fmt::format("judged by the witnesses (rule {}: {})", j.row, j.why);
  const std::string evidence = fmt::format("{}\narrival witness: {}\ndrop point: {}\nsandbox's report:\n{}",
                                           head, arrival.text, drop.text, sandbox_evidence);
  const char* arrived = arrival.state == Witnessed::seen       ? "arrived"
                        : arrival.state == Witnessed::not_seen ? "nothing arrived"
                                                               : "arrival not witnessed";
  const char* stopped = drop.state == Witnessed::seen       ? "stopped"
                        : drop.state == Witnessed::not_seen ? "no drop record"
                                                            : "drop not witnessed";
  CheckResult c =
      make("egress:" + target.name, j.status == CheckStatus::pass, allowed ? "reached" : "blocked",
           fmt::format("{}, {}; sandbox reported {}", arrived, stopped, sandbox_result),
           failure_reason(target, where, why, j, sandbox_result), evidence);
  c.status = j.status;
  c.judges = egress_judges(j, allowed, sandbox_result, arrival.state, drop.state);
  c.self_reported = j.row == std::string_view("W");
  return c;
}

bool arrival_seen(const VerifyInput& in, const deploy::EgressTarget& target) {
  return arrival_side(in, target, true).state == Witnessed::seen;
}

}  // namespace isoharness::verify::detail
