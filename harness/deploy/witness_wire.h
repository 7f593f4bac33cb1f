// The operator witness log's wire format (docs/CONTRACTS.md §4.4): how a witness log
// server hands the lines of its log (witness_log.h) to the harness, read incrementally and
// authenticated. The request names a byte offset into the log; the answer is
//
//   A2 start <from> <log-size> <log-id> <mac>   once, first
//   A2 <offset> <mac> <log line>                for each whole line from <from> on
//
// where <mac> is HMAC-SHA256, in lower-case hex, keyed with the token the operator and the
// harness share, over "start <from> <log-size> <log-id>" and over "<log-id> <offset> <log
// line>". <log-id> names the log (witness_log_id: a digest of its first line), so a reader
// whose cursor was made on another log at the same address sees it was replaced. Offsets
// are byte offsets of each line in the log, so the reader sees a line dropped, reordered,
// replayed or forged, and resumes the next read at the byte after the last line it
// accepted. The token itself never crosses the wire. Parsing is separate from I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace isoharness::deploy {

// HMAC-SHA256(key, message) in lower-case hex (64 characters).
std::string witness_mac(std::string_view key, std::string_view message);

// How many of a log's first bytes its identity is made of, at most.
inline constexpr std::size_t kWitnessLogIdBytes = 4096;

// A log's identity from its first bytes (`head`, at least the first kWitnessLogIdBytes of
// the log when it has that many): the first 32 hex digits of SHA-256 over its first line
// (without the newline), or over its first kWitnessLogIdBytes bytes when no newline comes
// before; "-" while the log holds neither (no identity yet).
std::string witness_log_id(std::string_view head);

// The answer a server sends for `log` (the log's bytes from offset `from` on; the whole
// log is `log_size` bytes, its identity `log_id`): the start line, then at most
// `max_bytes` of framed whole lines.
std::string frame_witness_log(std::string_view key, std::string_view log_id, std::string_view log,
                              long long from, long long log_size, std::size_t max_bytes);

// What a reader accepted of one answer.
struct WitnessFrames {
  std::string lines;           // the accepted log lines, each ending in '\n', in order
  long long next_offset = -1;  // where the next read starts (after the last accepted line)
  long long log_size = -1;     // the log's size as the server said
  std::string log_id;          // the log's identity, once the start line's MAC held
  bool replaced = false;       // not the log read so far (see read_witness_frames): nothing taken
  std::size_t rejected = 0;    // lines whose MAC, offset or shape was wrong
  std::string problem;         // "" or why the answer cannot be trusted as a whole
};

// Checks an answer to a read from `from` of the log named `known_id` ("" when none was
// read yet): its start line, then each line's MAC and that the offsets follow one another
// without a gap. Reading stops at the first line that fails (everything after it is
// unanchored); a cut last line is left for the next read. An authenticated start line
// naming another identity than `known_id`, or a log shorter than `from`, marks the answer
// `replaced` and takes none of its lines: the log was replaced or truncated, and the
// reader starts again from byte 0.
WitnessFrames read_witness_frames(std::string_view body, std::string_view key, long long from,
                                  std::string_view known_id);

// What a reader takes of a log read as it is (over SFTP, without MACs: the channel
// authenticates the server): `head` the log's first bytes (at least kWitnessLogIdBytes when
// it has them), `bytes` what was read from `from`, `log_size` its size when read. The same
// fields and rules as read_witness_frames, without the MAC checks: whole lines only, and
// `replaced` when the identity is not `known_id` or the log is shorter than `from`.
WitnessFrames raw_witness_frames(std::string_view head, std::string_view bytes, long long from,
                                 long long log_size, std::string_view known_id);

}  // namespace isoharness::deploy
