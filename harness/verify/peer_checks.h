// Other evals' sandboxes: while the run holds several sandboxes live, each tries a sample of
// the others (not its own item's sibling services, which sibling_checks.h judges) on TCP
// 2222 (a sandbox's sshd, which the platform's runner opens to every entity) and on the
// port where the peer's `isoprobe peer-serve` records who connects and with which nonce.
// Expected at every level: every such peer unreachable on every port.
//
// Evidence comes from both ends. The prober's report (`isoprobe reach`) says what its
// connects did; the peer's record says who arrived. A peer is reachable when the prober
// connected or was refused (the peer's own stack answered) or when the peer's record holds
// the prober's nonce or address. It is unreachable only when the prober saw no answer AND
// the peer's record shows its server looking at the port for the whole attempt with nothing
// from the prober: silence without a live witness is never a pass (n/a, "unwitnessed").
// Whether silence was a policy's drop or no route at all, the prober can tell only as far
// as an ICMP error came back (`unreachable`) or nothing did (`timeout`); the evidence says
// which. Where the harness knows the two live in separate networks (PeerSeen::
// separate_network), or the peer's address is one of the prober's own (another network
// numbered alike: the try would reach the prober itself), silence is not a pass either.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/verify/verify.h"

namespace isoharness::verify {

// The port the peer's serve listens on, in every sandbox.
inline constexpr int kPeerServePort = 7447;
inline constexpr int kPeerSshPort = 2222;

enum class PeerPort { ssh, serve };

// One connect the prober was asked to make.
struct PeerTry {
  std::string target;    // the --target name given to `isoprobe reach`
  std::size_t peer = 0;  // index into PeerObservation::peers
  PeerPort port = PeerPort::ssh;
  std::string address;
};

// One outcome of `isoprobe reach`, read from the sandbox's answer.
struct ReachResult {
  std::string name, address, result, banner;
  int port = 0, err = 0;
  std::int64_t started_unix_ms = 0, ended_unix_ms = 0;
};

struct PeerConnectionSeen {
  std::string from, nonce;
  std::int64_t at_unix_ms = 0;
};

// The peer's record (`isoprobe peer-record`), read from the peer's sandbox.
struct PeerServeSeen {
  bool read = false;    // a well-formed record came back
  std::string why_not;  // when not: what the harness got instead
  int port = 0;
  std::int64_t started_unix_ms = 0, alive_unix_ms = 0, until_unix_ms = 0;
  bool ended = false;
  std::vector<PeerConnectionSeen> connections;
  int more_connections = 0;
};

struct PeerSeen {
  std::string name, item_id, eval_set;  // the peer sandbox, its item, its eval set ("" = none)
  std::vector<std::string> addresses;   // its own report (posture `addresses`), v4 then v6
  PeerServeSeen serve;
  // Set when the harness knows the peer lives in another network than the prober (reached
  // through another jumphost: each stand-in eval is a world of its own): silence then
  // shows no route, not a policy, and is never a pass. Says why.
  std::string separate_network;
  std::string service = {};  // the peer's agent service (the one tried), "" = unknown
};

struct PeerObservation {
  std::string nonce;                       // the prober's, sent as its first line
  std::vector<std::string> own_addresses;  // the prober's own (to find it in a peer's record)
  bool reach_answered = false;             // `isoprobe reach` printed its document
  std::string reach_detail;                // when not: the command's status and stderr head
  std::vector<PeerTry> tries;
  std::vector<ReachResult> results;
  std::vector<PeerSeen> peers;
};

// `isoprobe reach`'s document; none when it is not one (bounded: at most 256 results).
std::optional<std::vector<ReachResult>> parse_reach(std::string_view text);
// `isoprobe peer-record`'s document; read = false (with why_not) when it is not one.
PeerServeSeen parse_peer_serve(std::string_view text);

// "peers:tcp-2222" and "peers:serve-port" over every peer tried; with no peer, one n/a check
// "peers" saying there was no live peer. A failure names the shape of the ingress rule
// that what was reached shows (rule_shape): which port, from which entities, for which
// service, as a platform's policy would write it.
//
// rule_shape: from whether 2222 and the serve port were reachable. 2222 alone: an ingress
// rule opening TCP 2222 of the peer's service to other evals' pods (the shape of the
// platform runner's per-sample rule for the human baseliner's sshd, fromEntities [all]);
// the serve port (any port beyond 2222): ingress from other evals' pods on every port (an
// ingress "deny" written `ingress: - {}`, which allows all). "" when neither was reached.
std::string rule_shape(bool ssh_reached, bool serve_reached, const std::string& service);
std::vector<CheckResult> verify_peers(const PeerObservation& observed);
CheckResult no_live_peer(const std::string& why);

}  // namespace isoharness::verify
