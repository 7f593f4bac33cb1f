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
#include <functional>
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

// Waits, bounded, until a witness writes a heartbeat after the wait began: `beats` reads
// what the log gained and returns how many heartbeats the log has shown so far (-1: it could
// not be read). It is called at once, then every `period`, until the count rises above the
// first readable count, or `max_wait` has passed. A heartbeat that was not in the log at the
// first read was written after it, whatever the witness's clock says; the witness logs in
// order, so whatever reached it before then is in the log above that heartbeat. True when it
// saw one; false when it waited max_wait (a dead or silent witness: the log is judged as it
// is, and the coverage rule finds it wanting).
bool wait_for_fresh_heartbeat(const std::function<long long()>& beats, std::chrono::milliseconds period,
                              std::chrono::milliseconds max_wait);

}  // namespace isoharness::deploy
