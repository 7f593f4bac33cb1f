// An outside witness's log: the local world's witness (isoharness-world-helper witness)
// writes it, and an operator-run witness on a deployment writes the same format (the hawk
// backend reads it over HTTP or SFTP, docs/CONTRACTS.md §4.4). One line per packet or DNS query
// that arrived,
//
//   W1 <unix_ms> <kind> <source> <destination> <port> <nonce|-> <name|->
//
// kind: tcp-syn, tcp-data (a TCP segment whose first bytes carry a nonce), udp, icmp-echo,
// dns; plus "ready" (the witness started: the log's first line, its nonce field a random
// value that names the log, deploy/witness_wire.h), "heartbeat" (it
// is alive: one at least every kHeartbeatMs), "quota" (it stopped logging the source in the
// line's source field, which sent more than its share) and "full" (it stopped logging at its
// line cap). Parsing is separate from reading: the text may be
// truncated at any byte (the reader reads a bounded tail), and a line that is not exactly
// this shape is skipped and counted.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "harness/deploy/backend.h"

namespace isoharness::deploy {

// How often a witness writes a heartbeat, and the longest gap between two heartbeats (or
// the probe's window and the nearest one) a view may span and still be complete.
inline constexpr long long kHeartbeatMs = 250;
inline constexpr long long kMaxHeartbeatGapMs = 1500;

struct WitnessLog {
  std::vector<WitnessRecord> records;
  bool ready = false;                 // a "ready" line was seen
  long long full_since_ms = -1;       // the "full" line's time, -1 when the log never filled
  std::vector<long long> heartbeats;  // the times of "ready" and "heartbeat" lines, in log order
  std::vector<std::pair<std::string, long long>> quotas;  // a source and when it ran out of its share
  int malformed = 0;
};

WitnessLog parse_witness_log(std::string_view text);

// The records of one sandbox: from `source` or `source6` (when non-empty) or carrying
// `nonce` (when non-empty), with a time inside [from_ms, to_ms]. complete is false when
// the log filled before to_ms, or the sandbox's source ran out of its share before to_ms.
WitnessView select_witness_records(const WitnessLog& log, const std::string& source,
                                   const std::string& source6, const std::string& nonce, long long from_ms,
                                   long long to_ms);

// Whether the witness was alive for the whole of [from_ms, to_ms]: a heartbeat at or before
// from_ms, one at or after to_ms, and no two consecutive ones further apart than
// kMaxHeartbeatGapMs in between. Empty when covered, else why not (for WitnessView::note).
std::string heartbeat_gap(const WitnessLog& log, long long from_ms, long long to_ms);

// select_witness_records, then incomplete unless heartbeats cover [cover_from_ms, cover_to_ms].
WitnessView select_covered_records(const WitnessLog& log, const std::string& source,
                                   const std::string& source6, const std::string& nonce, long long from_ms,
                                   long long to_ms, long long cover_from_ms, long long cover_to_ms);

}  // namespace isoharness::deploy
