// Where the harness is in an operator witness's log (docs/CONTRACTS.md §4.4): the byte
// offset the next read starts from and every record read so far, so each probe run reads
// only what the log gained since the last one. The records kept are bounded; a window
// reaching back before the oldest kept record is not judged on.
#pragma once

#include <cstddef>

#include "harness/deploy/witness_log.h"
#include "harness/deploy/witness_wire.h"

namespace isoharness::deploy::hawk {

inline constexpr std::size_t kMaxCursorRecords = 400000;

struct WitnessLogCursor {
  long long offset = 0;
  WitnessLog log;                  // the records read so far, in log order
  long long forgotten_to_ms = -1;  // records up to this time were dropped to keep the bound
  std::size_t rejected = 0;        // lines that failed their MAC or their place, in all
  long long beats = 0;             // the "ready" and "heartbeat" lines read so far, in all
};

// Takes one answer's accepted lines into the cursor and moves it past them.
void absorb(WitnessLogCursor& cursor, const WitnessFrames& frames,
            std::size_t max_records = kMaxCursorRecords);

}  // namespace isoharness::deploy::hawk
