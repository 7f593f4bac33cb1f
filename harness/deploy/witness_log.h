// An outside witness's log: the local world's witness (isoharness-world-helper witness)
// writes it, and an operator-run witness on a deployment writes the same format (the hawk
// backend reads it over HTTP, docs/CONTRACTS.md §4.4). One line per packet or DNS query
// that arrived,
//
//   W1 <unix_ms> <kind> <source> <destination> <port> <nonce|-> <name|->
//
// kind: tcp-syn, udp, icmp-echo, dns; plus "ready" (the witness started) and "full" (it
// stopped logging at its line cap). Parsing is separate from reading: the text may be
// truncated at any byte (the reader reads a bounded tail), and a line that is not exactly
// this shape is skipped and counted.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "harness/deploy/backend.h"

namespace isoharness::deploy {

struct WitnessLog {
  std::vector<WitnessRecord> records;
  bool ready = false;            // a "ready" line was seen
  long long full_since_ms = -1;  // the "full" line's time, -1 when the log never filled
  int malformed = 0;
};

WitnessLog parse_witness_log(std::string_view text);

// The records of one sandbox: from `source` or `source6` (when non-empty) or carrying
// `nonce` (when non-empty), with a time inside [from_ms, to_ms]. complete is false when
// the log filled before to_ms.
WitnessView select_witness_records(const WitnessLog& log, const std::string& source,
                                   const std::string& source6, const std::string& nonce, long long from_ms,
                                   long long to_ms);

}  // namespace isoharness::deploy
