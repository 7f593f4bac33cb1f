#include "harness/deploy/hawk/witness_cursor.h"

#include <algorithm>

namespace isoharness::deploy::hawk {

void absorb(WitnessLogCursor& cursor, const WitnessFrames& frames, std::size_t max_records) {
  cursor.rejected += frames.rejected;
  if (frames.next_offset > cursor.offset) cursor.offset = frames.next_offset;
  const WitnessLog fresh = parse_witness_log(frames.lines);
  auto& log = cursor.log;
  log.ready = log.ready || fresh.ready;
  if (log.full_since_ms < 0) log.full_since_ms = fresh.full_since_ms;
  log.malformed += fresh.malformed;
  cursor.beats += static_cast<long long>(fresh.heartbeats.size());
  log.records.insert(log.records.end(), fresh.records.begin(), fresh.records.end());
  if (log.records.size() <= max_records) return;
  const auto drop = static_cast<long>(log.records.size() - max_records);
  for (auto it = log.records.begin(); it != log.records.begin() + drop; ++it)
    cursor.forgotten_to_ms = std::max(cursor.forgotten_to_ms, it->unix_ms);
  log.records.erase(log.records.begin(), log.records.begin() + drop);
}

}  // namespace isoharness::deploy::hawk
