// The operator witness log's wire format (docs/CONTRACTS.md §4.4): how a witness log
// server hands the lines of its log (witness_log.h) to the harness, read incrementally and
// authenticated. The request names a byte offset into the log; the answer is
//
//   A1 start <from> <log-size> <mac>          once, first
//   A1 <offset> <mac> <log line>              for each whole line from <from> on
//
// where <mac> is HMAC-SHA256, in lower-case hex, keyed with the token the operator and the
// harness share, over "start <from> <log-size>" and over "<offset> <log line>". Offsets are
// byte offsets of each line in the log, so the reader sees a line dropped, reordered,
// replayed or forged, and resumes the next read at the byte after the last line it
// accepted. The token itself never crosses the wire. Parsing is separate from I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace isoharness::deploy {

// HMAC-SHA256(key, message) in lower-case hex (64 characters).
std::string witness_mac(std::string_view key, std::string_view message);

// The answer a server sends for `log` (the log's bytes from offset `from` on; the whole
// log is `log_size` bytes): the start line, then at most `max_bytes` of framed whole lines.
std::string frame_witness_log(std::string_view key, std::string_view log, long long from, long long log_size,
                              std::size_t max_bytes);

// What a reader accepted of one answer.
struct WitnessFrames {
  std::string lines;           // the accepted log lines, each ending in '\n', in order
  long long next_offset = -1;  // where the next read starts (after the last accepted line)
  long long log_size = -1;     // the log's size as the server said
  std::size_t rejected = 0;    // lines whose MAC, offset or shape was wrong
  std::string problem;         // "" or why the answer cannot be trusted as a whole
};

// Checks an answer to a read from `from`: its start line, then each line's MAC and that
// the offsets follow one another without a gap. Reading stops at the first line that fails
// (everything after it is unanchored); a cut last line is left for the next read.
WitnessFrames read_witness_frames(std::string_view body, std::string_view key, long long from);

}  // namespace isoharness::deploy
