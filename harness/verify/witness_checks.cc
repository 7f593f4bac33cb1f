// Egress judged from outside: the sandbox controls its own probe and may report
// "blocked" while it sends; it cannot make the world's witness forget what arrived. Where a
// witness covers a target, the check is judged on the witness's records (reached / not
// reached) against what the plan opens, and the sandbox's own report is shown beside it; a
// sandbox that reported blocked while the witness saw its packets fails with both.
#include <fmt/format.h>

#include "harness/verify/checks_internal.h"

namespace isoharness::verify::detail {
namespace {

// Whether one witness record is this target's traffic from this sandbox.
bool witness_record_matches(const deploy::WitnessView& view, const deploy::EgressTarget& t,
                            const deploy::WitnessRecord& r) {
  // An unknown address (a hawk route that names the sandbox by a name) matches nothing.
  const bool from_sandbox = (!view.source.empty() && r.source == view.source) ||
                            (!view.source6.empty() && r.source == view.source6);
  const bool ours = from_sandbox || (!view.nonce.empty() && r.nonce == view.nonce);
  if (t.proto == "tcp" || t.proto == "tls" || t.proto.starts_with("http"))
    return r.kind == "tcp-syn" && from_sandbox && r.destination == t.witness_address && r.port == t.port;
  if (t.proto == "udp")
    return r.kind == "udp" && ours && r.destination == t.witness_address && r.port == t.port;
  if (t.proto == "icmp") return r.kind == "icmp-echo" && ours && r.destination == t.witness_address;
  if (t.proto == "exfil")  // the resolver asks, not the sandbox: only the nonce ties the query to it
    return r.kind == "dns" && !view.nonce.empty() && r.name.find("ihw-" + view.nonce) != std::string::npos;
  return false;
}

std::string describe_witness_record(const deploy::WitnessRecord& r) {
  std::string line = fmt::format("{} {} -> {}", r.kind, r.source, r.destination);
  if (r.kind != "icmp-echo") line += ":" + std::to_string(r.port);
  if (!r.nonce.empty()) line += " nonce " + r.nonce;
  if (!r.name.empty()) line += " name " + r.name;
  return line + " at " + std::to_string(r.unix_ms);
}

}  // namespace

std::optional<WitnessSeen> witness_saw(const VerifyInput& in, const deploy::EgressTarget& target,
                                       std::string* why_not) {
  if (!in.witness) {
    *why_not = "no outside witness in this deployment";
    return std::nullopt;
  }
  if (target.witness_address.empty()) {
    *why_not = "the witness does not cover this target";
    return std::nullopt;
  }
  const auto& view = *in.witness;
  if (!view.complete) {
    *why_not = "the witness's record cannot be judged on: " + view.note;
    return std::nullopt;
  }
  WitnessSeen seen;
  std::string lines;
  int shown = 0;
  for (const auto& r : view.records) {
    if (!witness_record_matches(view, target, r)) continue;
    seen.reached = true;
    if (++shown <= 5) lines += "\n  " + describe_witness_record(r);
  }
  if (shown > 5) lines += fmt::format("\n  ... {} more", shown - 5);
  seen.evidence = fmt::format("judged by the witness: {}\nlooked for {} {}:{} from {} (nonce {}): {}",
                              view.witness, target.proto, target.witness_address, target.port, view.source,
                              view.nonce.empty() ? "none" : view.nonce,
                              seen.reached ? fmt::format("{} record(s){}", shown, lines) : "nothing arrived");
  return seen;
}

CheckResult witness_check(const deploy::EgressTarget& target, bool allowed, const std::string& why,
                          const WitnessSeen& seen, const std::string& sandbox_result,
                          const std::string& sandbox_evidence) {
  const bool sandbox_connected = sandbox_result == "connected";
  const bool pass = seen.reached == allowed;
  const std::string where = target.host + ":" + std::to_string(target.port) + "/" + target.proto;
  std::string reason = why + " (judged by the witness)";
  if (!pass && seen.reached && !sandbox_connected)
    reason =
        fmt::format("egress: {} ({}) reported {} by the sandbox while the witness saw it arrive, although {}",
                    target.name, where, sandbox_result, why);
  else if (!pass && seen.reached)
    reason = fmt::format("egress: {} ({}) reached the witness although {}", target.name, where, why);
  else if (!pass)
    reason = fmt::format("egress: {} ({}) should be reachable ({}) but the witness saw nothing arrive",
                         target.name, where, why);
  if (pass && seen.reached != sandbox_connected) reason += "; the sandbox reported " + sandbox_result;
  const std::string observed = std::string(seen.reached ? "reached" : "not reached") +
                               " (witness); sandbox reported " + sandbox_result;
  return make("egress:" + target.name, pass, allowed ? "reached" : "blocked", observed, reason,
              seen.evidence + "\nsandbox's report:\n" + sandbox_evidence);
}

}  // namespace isoharness::verify::detail
