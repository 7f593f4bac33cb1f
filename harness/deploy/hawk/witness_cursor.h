// Where the harness is in an operator witness's log (docs/CONTRACTS.md §4.4): which log
// (its identity), the byte offset the next read starts from and every record read so far,
// so each probe run reads only what the log gained since the last one. The records kept
// are bounded; a window reaching back before the oldest kept record is not judged on. When
// the address serves another log (another identity, or one shorter than what was read) the
// cursor starts again on it from byte 0, forgetting the old log's records: a window
// reaching back into the old log's time is not judged on.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "harness/common/expected.h"
#include "harness/deploy/witness_log.h"
#include "harness/deploy/witness_wire.h"

namespace isoharness::deploy::hawk {

inline constexpr std::size_t kMaxCursorRecords = 400000;

struct WitnessLogCursor {
  std::string log_id;  // the identity of the log read so far, "" before the first answer
  long long offset = 0;
  WitnessLog log;                  // the records read so far, in log order
  long long forgotten_to_ms = -1;  // records up to this time were dropped to keep the bound
  std::size_t rejected = 0;        // lines that failed their MAC or their place, in all
  long long newest_ms = -1;        // the latest time of any line read from this log
  int restarts = 0;                // how often the log at this address was found replaced
  long long beats = 0;             // the "ready" and "heartbeat" lines read so far, in all
};

// Takes one answer's accepted lines into the cursor and moves it past them.
void absorb(WitnessLogCursor& cursor, const WitnessFrames& frames,
            std::size_t max_records = kMaxCursorRecords);

// Starts the cursor again at byte 0 of the log named `log_id` (an answer marked
// `replaced`): the old log's records are dropped and every window up to its newest line
// is forgotten.
void restart(WitnessLogCursor& cursor, const std::string& log_id);

// One read of a log from byte `from`, at most `budget` bytes: what the reader took of it
// (read_witness_frames over HTTP, raw_witness_frames over SFTP) and how many bytes crossed.
struct LogRead {
  WitnessFrames frames;
  std::size_t bytes = 0;
};
using LogReader =
    std::function<Expected<LogRead>(long long from, const std::string& known_id, std::size_t budget)>;

// Reads what the log gained since the cursor, in reads of at most what is left of
// `max_bytes` (one probe run's bound), starting again from byte 0 once when the log was
// replaced. "" when it caught up, else why the log cannot be judged on this run.
// `used`, when given, is set to the bytes the reads took.
std::string catch_up(WitnessLogCursor& cursor, std::size_t max_bytes, const LogReader& read,
                     std::size_t* used = nullptr);

}  // namespace isoharness::deploy::hawk
