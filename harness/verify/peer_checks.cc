#include "harness/verify/peer_checks.h"

#include <algorithm>
#include <cstdint>

#include "harness/verify/checks_internal.h"

namespace isoharness::verify {
namespace {

using detail::get_int;
using detail::get_string;
using nlohmann::json;

constexpr std::size_t kMaxResults = 256;
constexpr std::size_t kMaxConnections = 1024;

std::string str_of(const json& obj, const char* key) {
  return get_string(&obj, key).value_or("");
}

std::int64_t int_of(const json& obj, const char* key) {
  return get_int(&obj, key).value_or(0);
}

const char* port_label(PeerPort p) {
  return p == PeerPort::ssh ? "tcp 2222 (sshd)" : "tcp 7447 (the peer's serve)";
}

enum class Verdict3 { reachable, unreachable, unwitnessed };

struct Judged {
  Verdict3 verdict = Verdict3::unwitnessed;
  std::string line;
  // Who showed a reachable peer: the peer's serve record (witness) or the prober's own
  // connect (sandbox report).
  Judge judge = Judge::sandbox_report;
};

// Slack around the prober's tries within which a connection from one of its addresses (and
// without its nonce) is taken for its own: an address is handed to the next sandbox once
// this one is gone, so an older arrival from it is another sandbox's.
constexpr std::int64_t kAddressSlackMs = 1000;

// Whether the peer's record holds the prober: by nonce, or by one of its own addresses
// while its tries ran.
const PeerConnectionSeen* arrival(const PeerObservation& o, const PeerServeSeen& s) {
  std::int64_t from = INT64_MAX, to = 0;
  for (const auto& r : o.results) {
    from = std::min(from, r.started_unix_ms);
    to = std::max(to, r.ended_unix_ms);
  }
  for (const auto& c : s.connections) {
    if (!o.nonce.empty() && c.nonce == o.nonce) return &c;
    const bool mine =
        std::find(o.own_addresses.begin(), o.own_addresses.end(), c.from) != o.own_addresses.end();
    if (mine && c.at_unix_ms + kAddressSlackMs >= from && c.at_unix_ms <= to + kAddressSlackMs) return &c;
  }
  return nullptr;
}

const ReachResult* result_of(const PeerObservation& o, const PeerTry& t) {
  for (const auto& r : o.results)
    if (r.name == t.target) return &r;
  return nullptr;
}

std::string silence_text(const ReachResult& r) {
  if (r.result == "timeout")
    return "no answer within the deadline (dropped on the way, or no route that answers)";
  return "an error came back (" + r.result + ", errno " + std::to_string(r.err) +
         "): refused on the way by a router or a policy, or no route";
}

Judged judge_try(const PeerObservation& o, const PeerTry& t) {
  const PeerSeen& peer = o.peers.at(t.peer);
  const std::string where = peer.name + " at " + t.address + " on " + port_label(t.port);
  const ReachResult* r = result_of(o, t);
  const PeerConnectionSeen* seen = t.port == PeerPort::serve ? arrival(o, peer.serve) : nullptr;
  if (seen)
    return {Verdict3::reachable,
            where + ": the peer's record holds this sandbox (from " + seen->from + ", nonce '" + seen->nonce +
                "')",
            Judge::witness};
  const auto& own = o.own_addresses;
  if (std::find(own.begin(), own.end(), t.address) != own.end())
    return {Verdict3::unwitnessed, where +
                                       ": that address is this sandbox's own: the peer lives in another "
                                       "network numbered alike, which this one has no route to"};
  if (!r) return {Verdict3::unwitnessed, where + ": the prober reported nothing for it"};
  if (r->result == "connected" || r->result == "refused")
    return {Verdict3::reachable, where + ": the prober's connect " + r->result +
                                     (r->banner.empty() ? "" : " (peer sent '" + r->banner + "')")};
  if (r->result != "timeout" && r->result != "unreachable")
    return {Verdict3::unwitnessed, where + ": the prober could not try (" + r->result + ")"};
  if (!peer.separate_network.empty())
    return {Verdict3::unwitnessed, where + ": " + silence_text(*r) + "; but " + peer.separate_network +
                                       ": silence shows no route, not a policy"};
  if (!peer.serve.read)
    return {Verdict3::unwitnessed,
            where + ": " + silence_text(*r) + "; the peer's serve was not seen (" + peer.serve.why_not + ")"};
  if (peer.serve.started_unix_ms > r->started_unix_ms || peer.serve.alive_unix_ms < r->ended_unix_ms)
    return {Verdict3::unwitnessed,
            where + ": " + silence_text(*r) +
                "; the peer's serve did not look at its port for the whole try (served " +
                std::to_string(peer.serve.started_unix_ms) + ".." + std::to_string(peer.serve.alive_unix_ms) +
                ", tried " + std::to_string(r->started_unix_ms) + ".." + std::to_string(r->ended_unix_ms) +
                ")"};
  return {Verdict3::unreachable,
          where + ": " + silence_text(*r) + "; the peer's serve, live throughout, saw nothing of it"};
}

std::string peers_text(const PeerObservation& o) {
  std::string s;
  for (const auto& p : o.peers)
    s += (s.empty() ? "" : ", ") + p.name + " (item " + p.item_id +
         (p.eval_set.empty() ? "" : ", eval set " + p.eval_set) + ")";
  return s;
}

struct PortJudged {
  std::vector<std::string> reachable, unwitnessed;
  std::vector<Judge> judges;  // who showed each reachable try, once each
  std::string evidence;
  std::string reached_service;  // the service of the first peer reached
};

PortJudged judge_tries(const PeerObservation& o, PeerPort port) {
  PortJudged p;
  for (const auto& t : o.tries) {
    if (t.port != port) continue;
    const Judged j = judge_try(o, t);
    p.evidence += j.line + "\n";
    if (j.verdict == Verdict3::reachable && p.reachable.empty())
      p.reached_service = o.peers.at(t.peer).service;
    if (j.verdict == Verdict3::reachable) p.reachable.push_back(j.line);
    if (j.verdict == Verdict3::reachable &&
        std::find(p.judges.begin(), p.judges.end(), j.judge) == p.judges.end())
      p.judges.push_back(j.judge);
    if (j.verdict == Verdict3::unwitnessed) p.unwitnessed.push_back(j.line);
  }
  return p;
}

CheckResult judge_port(const PeerObservation& o, const PortJudged& p, const std::string& shape, PeerPort port,
                       const std::string& control) {
  const auto& reachable = p.reachable;
  const auto& unwitnessed = p.unwitnessed;
  const auto& evidence = p.evidence;
  const std::string expected = std::string("every other eval's sandbox unreachable on ") + port_label(port);
  if (!reachable.empty()) {
    CheckResult c{control,
                  CheckStatus::fail,
                  expected,
                  std::to_string(reachable.size()) + " reachable",
                  control + ": another eval's sandbox is reachable: " + reachable.front() + "; " + shape,
                  detail::bounded(evidence)};
    c.judges = p.judges;
    return c;
  }
  if (evidence.empty())
    return detail::not_applicable(control,
                                  "unwitnessed: no try on this port was made (" + peers_text(o) + ")");
  if (!unwitnessed.empty())
    return {control,
            CheckStatus::na,
            expected,
            "not witnessed",
            "unwitnessed: " + unwitnessed.front(),
            detail::bounded(evidence)};
  CheckResult c{control,
                CheckStatus::pass,
                expected,
                "unreachable, witnessed by each peer",
                "no answer from " + peers_text(o) + ", each peer's serve live and untouched",
                detail::bounded(evidence)};
  c.judges = {Judge::sandbox_report, Judge::witness};  // the prober saw no answer, each peer nothing
  return c;
}

}  // namespace

std::optional<std::vector<ReachResult>> parse_reach(std::string_view text) {
  const json doc = json::parse(std::string(text), nullptr, false);
  if (!doc.is_object() || str_of(doc, "schema") != "isoharness.reach/v1") return std::nullopt;
  const auto it = doc.find("results");
  if (it == doc.end() || !it->is_array() || it->size() > kMaxResults) return std::nullopt;
  std::vector<ReachResult> out;
  for (const auto& r : *it) {
    if (!r.is_object()) return std::nullopt;
    out.push_back({str_of(r, "name"), str_of(r, "address"), str_of(r, "result"),
                   detail::bounded(str_of(r, "banner"), 160), static_cast<int>(int_of(r, "port")),
                   static_cast<int>(int_of(r, "errno")), int_of(r, "started_unix_ms"),
                   int_of(r, "ended_unix_ms")});
  }
  return out;
}

PeerServeSeen parse_peer_serve(std::string_view text) {
  PeerServeSeen s;
  const json doc = json::parse(std::string(text), nullptr, false);
  if (!doc.is_object() || str_of(doc, "schema") != "isoharness.peer-serve/v1") {
    s.why_not = "no peer-serve record: '" + detail::bounded(std::string(text.substr(0, 200)), 200) + "'";
    return s;
  }
  const auto conns = doc.find("connections");
  if (conns == doc.end() || !conns->is_array() || conns->size() > kMaxConnections) {
    s.why_not = "the record's connections are not a bounded list";
    return s;
  }
  for (const auto& c : *conns)
    if (c.is_object())
      s.connections.push_back({str_of(c, "from"), str_of(c, "nonce"), int_of(c, "at_unix_ms")});
  s.port = static_cast<int>(int_of(doc, "port"));
  s.started_unix_ms = int_of(doc, "started_unix_ms");
  s.alive_unix_ms = int_of(doc, "alive_unix_ms");
  s.until_unix_ms = int_of(doc, "until_unix_ms");
  s.ended = detail::get_bool(&doc, "ended").value_or(false);
  s.more_connections = static_cast<int>(int_of(doc, "more_connections"));
  s.read = s.started_unix_ms > 0 && s.alive_unix_ms >= s.started_unix_ms && s.port == kPeerServePort;
  if (!s.read) s.why_not = "the record names no window or another port";
  return s;
}

std::vector<CheckResult> verify_peers(const PeerObservation& o) {
  if (o.peers.empty()) return {no_live_peer("no live peer of another item while this sandbox ran")};
  if (!o.reach_answered) {
    const std::string why =
        "unwitnessed: the prober did not answer (" + detail::bounded(o.reach_detail, 400) + ")";
    return {detail::not_applicable("peers:tcp-2222", why), detail::not_applicable("peers:serve-port", why)};
  }
  const PortJudged ssh = judge_tries(o, PeerPort::ssh), serve = judge_tries(o, PeerPort::serve);
  const std::string service = !serve.reached_service.empty() ? serve.reached_service : ssh.reached_service;
  const std::string shape = rule_shape(!ssh.reachable.empty(), !serve.reachable.empty(), service);
  return {judge_port(o, ssh, shape, PeerPort::ssh, "peers:tcp-2222"),
          judge_port(o, serve, shape, PeerPort::serve, "peers:serve-port")};
}

std::string rule_shape(bool ssh_reached, bool serve_reached, const std::string& service) {
  const std::string of = service.empty() ? "the peer's agent service" : "service '" + service + "'";
  if (serve_reached)
    return "rule shape: ingress to " + of + " from other evals' pods on every port" +
           (ssh_reached ? " (TCP 2222 and " : " (") + port_label(PeerPort::serve) +
           " reached), as an ingress \"deny\" written `ingress: - {}` allows all";
  if (ssh_reached)
    return "rule shape: ingress to " + of + " on TCP 2222 from other evals' pods, no other port (" +
           port_label(PeerPort::serve) +
           " not reached), as a rule for the human baseliner's sshd allowing TCP 2222 fromEntities [all] "
           "opens it";
  return "";
}

CheckResult no_live_peer(const std::string& why) {
  return detail::not_applicable("peers", why);
}

}  // namespace isoharness::verify
