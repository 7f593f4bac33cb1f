// The peer witness: `isoprobe peer-serve` listens on one TCP port (IPv4 and IPv6) for a
// bounded window and records every connection it accepts, with the nonce the connecting
// peer sent as its first line ("isoharness-peer <nonce>\n"), into a record file that it
// rewrites at least every 250 ms (its `alive_unix_ms` says when it last looked). It forks a
// server and returns at once, once the port is listening, so the harness can go on using
// its one session; `isoprobe peer-record` prints the record (after waiting, bounded, until
// the server has looked again past a given time). `isoprobe reach` is the other side: it
// connects to peers' addresses and sends its nonce line. Every count, byte and second here
// is bounded.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/target_spec.h"

namespace isoprobe {

inline constexpr const char* kPeerServeSchema = "isoharness.peer-serve/v1";
inline constexpr const char* kReachSchema = "isoharness.reach/v1";

struct PeerServeOptions {
  std::uint16_t port = 7447;
  long window_ms = 120000;  // 1 s .. 1 h
  int max_connections = 64;
  std::string record = ".isoprobe/peer-serve.json";
};

// The first line a prober sends.
std::string peer_line(std::string_view nonce);
// The nonce of a first line (bytes as read, possibly cut); none when it is not one.
std::optional<std::string> parse_peer_line(std::string_view bytes);

// One recorded connection.
struct PeerConnection {
  std::string from;  // the peer's address as the server saw it
  std::int64_t at_unix_ms = 0;
  std::string nonce;  // "" when none came (or not a valid one)
};

struct PeerServeRecord {
  std::uint16_t port = 0;
  std::int64_t started_unix_ms = 0, alive_unix_ms = 0, until_unix_ms = 0;
  std::vector<std::string> families;  // "ipv4", "ipv6": what it listens on
  std::vector<PeerConnection> connections;
  int more_connections = 0;  // accepted past max_connections, not recorded
  bool ended = false;
};
nlohmann::json to_json(const PeerServeRecord& r);

// Binds and listens, forks the server, prints the record so far with "listening": true and
// the server's pid, and returns 0; 3 (a message on stderr) when it cannot listen or fork.
int start_peer_serve(const PeerServeOptions& options);
// Waits (at most wait_ms) until the record says the server looked at its port after
// `after` (or it ended), then prints the record as it is. 3 when there is none.
int print_peer_record(const std::string& record, std::int64_t after, long wait_ms);

// One outcome of `reach`.
struct ReachOutcome {
  std::string name, address;
  std::uint16_t port = 0;
  std::string result;  // connected / refused / unreachable / timeout / no_socket
  int err = 0;
  std::string banner;  // what the peer sent first (printable, at most 120 bytes)
  std::int64_t started_unix_ms = 0, ended_unix_ms = 0;
};
// Connects to every target at once (tcp, literal addresses only), sends the nonce line on
// each that connects and reads a short banner; all within deadline_ms.
std::vector<ReachOutcome> run_reach(const std::vector<TargetSpec>& targets, const std::string& nonce,
                                    long deadline_ms);

std::int64_t unix_ms_now();

}  // namespace isoprobe
