// The runner's part of peer reachability (other evals' sandboxes: harness/verify/
// peer_checks.h, the run's board: peer_board.h). Two steps in an attempt:
//   start_peer_serve  before the posture probe: `isoprobe peer-serve` in the sandbox, so the
//                     sandbox is a witness for its peers while it is live;
//   probe_peers       after it: join the board with the sandbox's own addresses (the
//                     posture's `addresses`), borrow up to k others, try them with `isoprobe
//                     reach` on 2222 and the serve port, read each one's record through a
//                     session of its own into that peer, and judge.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/runner/peer_board.h"
#include "harness/runner/sandbox_channel.h"
#include "harness/verify/peer_checks.h"

namespace isoharness::runner {

struct JobContext;
struct Job;
class LiveSandbox;

struct PeerServeStart {
  bool listening = false;
  std::string detail;  // the command's answer or why it failed (bounded)
  std::chrono::milliseconds window{0};
  std::vector<std::string> ipv4, ipv6;  // the sandbox's own addresses, as the serve found them
};

// What the attempt's record keeps of the peer phase.
struct PeerRecord {
  std::vector<verify::CheckResult> checks;
  nlohmann::json summary = nullptr;  // serve, own addresses, peers tried and what each showed
};

// The window a sandbox's serve listens for: long enough for the attempt's posture probe and
// its peers' reads, bounded.
std::chrono::milliseconds peer_serve_window(std::chrono::milliseconds posture_deadline);

PeerServeStart start_peer_serve(SandboxChannel& session, std::chrono::milliseconds window);

// The sandbox's own addresses from its posture document (`addresses`), v4 and v6.
void own_addresses(const nlohmann::json& posture, std::vector<std::string>& v4, std::vector<std::string>& v6);

// Puts a sandbox whose serve listens on the board, with the addresses the serve reported
// (membership leaves it when the attempt ends). A sandbox whose serve does not listen, or
// that reported no address, is no one's peer: nothing could witness a try at it.
void join_peer_board(const JobContext& ctx, const Job& job, LiveSandbox& sandbox, const std::string& name,
                     const PeerServeStart& serve, std::optional<BoardMembership>& membership);

// Borrows peers, tries them, reads their records and judges. The sandbox's own addresses
// (to find it in a peer's record) are the posture's `addresses` and the serve's. Never
// throws for what a sandbox does; only a lost jump connection throws.
PeerRecord probe_peers(const JobContext& ctx, const Job& job, LiveSandbox& sandbox, const std::string& name,
                       const nlohmann::json& posture, const PeerServeStart& serve);

}  // namespace isoharness::runner
